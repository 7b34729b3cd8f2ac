import { secretsOf } from './config.ts';
import type { Logger } from './core/logger.ts';
import { secretMasker } from './core/redact.ts';
import { UNTRACED, type Tracing } from './tracing/api.ts';
import type { TracingSettings } from './tracing/settings.ts';

export { UNTRACED, type Tracing } from './tracing/api.ts';

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
