/**
 * The core's vocabulary and its ports. Everything outside src/core (the LLM client, the store,
 * the tool registry, the platform adapters) implements or calls these; nothing here imports them.
 */

export interface ToolCall {
  /** Spool's own id, unique across servers and replicas: the one the model sees from then on. */
  id: string;
  name: string;
  /** Raw JSON text exactly as the model produced it (it may be malformed). */
  arguments: string;
  /** The id the model gave the call; servers may reuse ("call_0") or omit it. */
  modelId?: string;
  /**
   * The tool was derived (ToolFlags) when called: recorded with the call, so the transcript alone
   * says which outputs to leave out once moved past, and search skips the call and its result.
   */
  derived?: boolean;
}

/**
 * One message of the LLM transcript. `turn` is the number of the user turn that produced it:
 * microcompaction ages tool results by it, and it lets synthetic messages (a "continue" nudge)
 * belong to a turn without counting as one.
 */
export type Message =
  /** `inboxId` names the inbox row a turn started from, so a resumed turn is recognised. */
  | { role: 'user'; content: string; turn: number; inboxId?: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; turn: number }
  | { role: 'tool'; toolCallId: string; content: string; turn: number };

export type ToolMessage = Extract<Message, { role: 'tool' }>;

/** Where a conversation lives. Search scope and continuation lookup are bounded by it. */
export interface ConversationKey {
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
}

/** One channel of one workspace: the boundary of search and of continuation lookup. */
export type ChannelScope = Omit<ConversationKey, 'thread'>;

export interface Conversation extends ConversationKey {
  id: string;
}

// ---------------------------------------------------------------- LLM port

/** How the turn loop treats a tool's calls and output: the loop reads these, never tool names. */
export interface ToolFlags {
  /**
   * Its output is a view of results already stored (a page, matching lines, search hits): it is
   * left out of later steps' requests once the model has moved past it, since asking again is
   * cheap, and search does not look into it.
   */
  derived?: boolean;
  /** Its output is bounded already: it counts toward the turn's result budget but is never previewed. */
  bounded?: boolean;
  /** Calling it is not a step of work: it does not count toward MAX_TOOL_ITERATIONS. */
  freeIteration?: boolean;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  flags?: ToolFlags;
}

export interface LlmRequest {
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /** 'none' asks for a final answer without further tool calls. */
  toolChoice: 'auto' | 'none';
  /** This request's output budget, when it differs from the client's. */
  maxTokens?: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface LlmUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface LlmResponse {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage?: LlmUsage;
}

export interface LlmPort {
  complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse>;
  /** Whether the request, estimated before it is sent, fits the model's context window with its output budget. */
  fits?(request: LlmRequest): Promise<boolean>;
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

// ---------------------------------------------------------------- Store errors

/**
 * The store failed (the database is away, most often): nothing is known to be wrong with the
 * turn, it only cannot be made durable now. It is not answered with a failure: the message is
 * tried again from what was stored, as the delivery pipeline retries any failure. An outage
 * spends none of its attempts, since nothing can be written while it lasts.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

/** The store with its failures typed as StoreError, whatever the adapter behind it throws. */
export function typedStoreErrors(store: StorePort): StorePort {
  const typed =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      method.apply(store, args).catch((error: unknown) => {
        throw new StoreError(`the store failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
  return {
    openConversation: typed(store.openConversation),
    loadTranscript: typed(store.loadTranscript),
    appendMessages: typed(store.appendMessages),
    readToolResult: typed(store.readToolResult),
  };
}

// ---------------------------------------------------------------- Tool port

/** Bytes a tool returned (an image, audio, a blob): only described to the model; kept when under the store's cap. */
export interface BinaryPart {
  kind: string;
  mimeType?: string;
  sizeBytes: number;
  /** The bytes, base64; absent when over the cap. */
  base64?: string;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
  binaries?: BinaryPart[];
}

export interface ToolContext {
  conversation: Conversation;
  turn: number;
  signal: AbortSignal;
}

export interface ToolPort {
  list(): ToolSpec[];
  /** Must not throw: failures come back as `{ isError: true }` outcomes. */
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}

// ---------------------------------------------------------------- Store port

export interface ToolResultRecord {
  toolCallId: string;
  /** The full, untruncated result. */
  content: string;
  isError: boolean;
  durationMs: number;
  binaries?: BinaryPart[];
}

/** What a step writes besides its messages: the results its tool calls returned, the model call's usage. */
export interface StepRecords {
  results?: ToolResultRecord[];
  usage?: LlmUsage;
}

export interface StorePort {
  /** Finds or creates the conversation for a platform location. */
  openConversation(key: ConversationKey): Promise<Conversation>;
  loadTranscript(conversation: Conversation): Promise<Message[]>;
  /**
   * Appends one step, in order, atomically; durable when it resolves. An assistant message's tool
   * calls are recorded with it, so every call is stored before it runs.
   */
  appendMessages(conversation: Conversation, messages: Message[], records?: StepRecords): Promise<void>;
  /**
   * The full text of a stored result: this conversation's first, then the newest in the same
   * channel (search_history hands out ids from sibling threads).
   */
  readToolResult(conversation: Conversation, toolCallId: string): Promise<string | undefined>;
}

// ---------------------------------------------------------------- History search port

export type HistoryEntryKind = 'user' | 'assistant' | 'tool_call' | 'tool_result';

export interface HistoryHit {
  kind: HistoryEntryKind;
  createdAt: Date;
  /** The thread (or session) of the hit within the searched channel. */
  thread: string;
  toolName?: string;
  toolCallId?: string;
  /** Where in a tool result the match is: the offset get_continuation reads on from. */
  offset?: number;
  /** At most 300 characters around the first match. */
  excerpt: string;
  before?: { role: string; text: string };
  after?: { role: string; text: string };
}

export interface HistoryQuery {
  text: string;
  /** Only entries newer than this many days. */
  days?: number;
  maxResults: number;
  /** Leave out this turn of this conversation: it holds the question being asked. */
  excludeTurn?: { conversationId: string; turn: number };
}

export interface HistorySearchPort {
  /** Entries from the channel of `scope` (all its threads, nothing else), newest first. */
  searchHistory(scope: ChannelScope, query: HistoryQuery): Promise<HistoryHit[]>;
}
