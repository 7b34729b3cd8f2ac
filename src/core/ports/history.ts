import type { ChannelScope } from './conversation.ts';

/** The history search port: recall over a channel's messages and tool runs. */

export type HistoryEntryKind = 'user' | 'assistant' | 'tool_call' | 'tool_result';

export interface HistoryHit {
  kind: HistoryEntryKind;
  createdAt: Date;
  /** The thread (or session) of the hit within the searched channel. */
  thread: string;
  toolName?: string;
  toolCallId?: string;
  /** Whose turn it was: the platform's id of the person whose message the turn answered. */
  person?: string;
  /** Where in a tool result the match is: the offset get_continuation reads on from. */
  offset?: number;
  /** At most 300 characters around the first match. */
  excerpt: string;
  before?: { role: string; text: string };
  after?: { role: string; text: string };
  /** For a call that needed approval: where it stands, who decided and when. */
  approval?: { status: string; by?: string; at?: Date };
}

export interface HistoryQuery {
  text: string;
  /** Only entries newer than this many days. */
  days?: number;
  maxResults: number;
  /** Leave out this turn of this conversation: it holds the question being asked. */
  excludeTurn?: { conversationId: string; turn: number };
  /** Only calls and results of this tool (its name as the model sees it). */
  tool?: string;
  /** Only calls and results of this MCP server's tools (named `<server>__…`). */
  server?: string;
  /** Only the turns that answered this person (their platform id). */
  person?: string;
}

/** A tool run's whole result, as stored. */
export interface StoredResult {
  toolName: string;
  content: string;
}

export interface HistorySearchPort {
  /** Entries from the channel of `scope` (all its threads, nothing else), newest first. */
  searchHistory(scope: ChannelScope, query: HistoryQuery): Promise<HistoryHit[]>;
  /** The whole stored result of a tool call in the channel of `scope`, by the id recall shows. */
  storedResult(scope: ChannelScope, toolCallId: string): Promise<StoredResult | undefined>;
}
