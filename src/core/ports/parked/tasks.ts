import type { ConversationKey } from '../conversation.ts';

/**
 * The task port: tool calls a server runs as tasks (MCP tasks), kept by the call's id so that a
 * restart, or another replica, follows the same task instead of calling the tool again.
 */

/** One call running as a task on a server. */
export interface StoredTask {
  toolCallId: string;
  server: string;
  taskId: string;
  /** Where the call was made: a Stop there cancels it. */
  conversation: ConversationKey;
}

export interface TaskPort {
  /** Keeps the task a call became: before the turn waits on it, so a crash cannot lose it. */
  save(task: StoredTask): Promise<void>;
  /** The unfinished task a call became, if it became one. */
  open(toolCallId: string): Promise<StoredTask | undefined>;
  /** The unfinished tasks among these calls, by call id. */
  openAmong(toolCallIds: string[]): Promise<Set<string>>;
  /** The unfinished tasks of calls made in this conversation (a Stop there cancels them). */
  openIn(conversation: ConversationKey): Promise<StoredTask[]>;
  /** The task ended (its result taken, or it failed or was cancelled): nothing follows it again. */
  finish(toolCallId: string, status: string): Promise<void>;
}
