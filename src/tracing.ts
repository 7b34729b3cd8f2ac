import { secretsOf } from './config.ts';
import type { Logger } from './core/logger.ts';
import type { LlmPort } from './core/ports/llm.ts';
import type { ToolPort } from './core/ports/tools.ts';
import type { TurnRunner } from './core/ports/turns.ts';
import { secretMasker } from './core/redact.ts';
import type { ModelEndpoint } from './tracing/spans.ts';
import type { TracingSettings } from './tracing/settings.ts';

/**
 * OpenTelemetry traces, as decorators over the ports: a span per turn, with a span per model
 * request and per tool call under it. Off, each decorator hands back what it was given.
 */
export interface Tracing {
  turns(runner: TurnRunner): TurnRunner;
  llm(llm: LlmPort, endpoint: ModelEndpoint): LlmPort;
  tools(tools: ToolPort): ToolPort;
  /** Sends what is still batched; called once, on the way out. */
  shutdown(): Promise<void>;
}

/** Tracing off: every port as it is. */
export const UNTRACED: Tracing = {
  turns: (runner) => runner,
  llm: (llm) => llm,
  tools: (tools) => tools,
  shutdown: async () => {},
};

/**
 * Tracing as the settings ask: on with OTEL_EXPORTER_OTLP_ENDPOINT. Off, the SDK is never loaded
 * and nothing is wrapped, so it costs nothing.
 */
export async function startTracing(
  settings: TracingSettings,
  logger: Logger,
  env: Record<string, string | undefined> = process.env,
): Promise<Tracing> {
  if (!settings.endpoint) return UNTRACED;
  const { sdkTracing } = await import('./tracing/sdk.ts');
  return sdkTracing(
    { captureContent: settings.captureContent, mask: secretMasker(secretsOf(env)) },
    logger,
  );
}
