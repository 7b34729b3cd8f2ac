import type { LlmPort } from '../core/ports/llm.ts';
import type { ToolPort } from '../core/ports/tools.ts';
import type { TurnRunner } from '../core/ports/turns.ts';
import type { OpenAiClientOptions } from '../llm/openai-client.ts';

// The side of tracing the app calls, free of OpenTelemetry: the SDK side (sdk.ts, spans.ts)
// implements it and is loaded only when tracing is on (see startTracing in ../tracing.ts).

/** The model client's settings its spans name: the default model, and Azure's endpoint if set. */
export type ModelEndpoint = Pick<OpenAiClientOptions, 'model' | 'azure'>;

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
