import type { Message, ToolCall } from './conversation.ts';
import type { ToolSpec } from './tools.ts';

/** The LLM port: the OpenAI-compatible client implements it. */

export interface LlmRequest {
  system: string;
  /** The model, when it differs from the client's (a channel's policy). */
  model?: string;
  messages: Message[];
  tools: ToolSpec[];
  /** 'none' asks for a final answer without further tool calls. */
  toolChoice: 'auto' | 'none';
  /** This request's output budget, when it differs from the client's. */
  maxTokens?: number;
  /**
   * Images among this turn's results, by tool call id: sent as image input where the model takes
   * it.
   */
  images?: ReadonlyMap<string, ImagePart[]>;
}

export interface ImagePart {
  mimeType: string;
  base64: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface LlmUsage {
  model: string;
  promptTokens: number;
  /** Of the prompt tokens, those the server read from its prompt cache (billed for less). */
  cachedPromptTokens?: number;
  completionTokens: number;
  /** Of the completion tokens, those spent reasoning. */
  reasoningTokens?: number;
  totalTokens: number;
  /** The server's id of the completion. */
  responseId?: string;
  /**
   * The counts the server reported that could not be kept as they were, and what became of each:
   * usage is bookkeeping, and odd numbers never cost an answer.
   */
  adjusted?: UsageAdjustment[];
}

/**
 * One count of a server's usage not kept as reported: `dropped` (not a count, negative, or past
 * any request's size: stored as 0 unless the others give it), `rounded` (a fraction), `clamped`
 * (more cached than prompt, more reasoning than completion, a total short of its parts), or
 * `derived` (missing, and worked out from the total).
 */
export interface UsageAdjustment {
  field:
    'prompt_tokens' | 'cached_tokens' | 'completion_tokens' | 'reasoning_tokens' | 'total_tokens';
  fix: 'dropped' | 'rounded' | 'clamped' | 'derived';
  /** What the server sent, as text for the log. */
  reported: string;
}

export interface LlmResponse {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage?: LlmUsage;
}

export interface LlmPort {
  complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse>;
  /**
   * Whether the request, estimated before it is sent, fits the model's context window with its
   * output budget.
   */
  fits?(request: LlmRequest): Promise<boolean>;
  /**
   * Tokens the model's context window can still take beside the request, estimated, and its reply
   * budget (what it asks for): what a page read for its next request may fill. Undefined when the
   * window is not known.
   */
  room?(request: LlmRequest): Promise<number | undefined>;
  /** The most tokens a request may be billed for: its estimated prompt and its reply budget. */
  mostTokens?(request: LlmRequest): Promise<number>;
}

/** The request did not fit the model's context window. The core compacts harder and retries. */
export class ContextLengthError extends Error {
  override readonly name = 'ContextLengthError';
}

/** Any other failure after the client's own retries; `message` is fit to show a user. */
export class LlmRequestError extends Error {
  override readonly name = 'LlmRequestError';
  constructor(
    message: string,
    readonly status?: number,
    /** Whether asking again may help: not for a refused key or a wrong URL. */
    readonly retryable = status === undefined || status === 429 || status >= 500,
  ) {
    super(message);
  }
}
