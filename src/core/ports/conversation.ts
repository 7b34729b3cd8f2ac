/**
 * The core's vocabulary: a conversation, where it lives, and the messages of its transcript.
 * Every port speaks it; nothing here imports anything.
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
