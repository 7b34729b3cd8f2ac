import type { ChannelScope } from '../conversation.ts';

/** A conversation's place: its channel and thread. */
export type Place = ChannelScope & { thread: string };

/** A binary part of a tool result, as listed (its bytes are fetched apart). */
export interface StoredPart {
  position: number;
  kind: string;
  mimeType?: string;
  sizeBytes: number;
  /** False when it was over TOOL_RESULT_BINARY_MAX_BYTES and only described. */
  kept: boolean;
}

/** A stored tool call, and its result when it has one, as the web pages show it. */
export interface CallRecord {
  /** The row's own id: a page's address. */
  id: string;
  conversationId: string;
  place: Place;
  toolCallId: string;
  toolName: string;
  arguments: string;
  turn: number;
  createdAt: Date;
  approval?: { status: string; by?: string; at?: Date; note?: string };
  result?: {
    content: string;
    isError: boolean;
    durationMs: number;
    binaries: StoredPart[];
  };
}

/** One row of a conversation, in the order it happened. */
export type ConversationEntry =
  | { kind: 'message'; at: Date; turn: number; role: string; content: string; person?: string }
  | { kind: 'call'; at: Date; turn: number; call: CallRecord }
  | {
      kind: 'model_request';
      at: Date;
      model: string;
      promptTokens: number;
      cachedPromptTokens: number;
      completionTokens: number;
      cost?: string;
    }
  | { kind: 'stop'; at: Date; by: string }
  | { kind: 'edit'; at: Date; person: string; text: string };

export interface ConversationRecord {
  id: string;
  place: Place;
  entries: ConversationEntry[];
}

/** What Spool stored, read for the web pages (src/store/transcripts/web-records.ts). */
export interface RecordsPort {
  /**
   * A tool call by its row id, or by its tool_call_id (where a reply's link points), with its
   * whole result.
   */
  call(id: string): Promise<CallRecord | undefined>;
  /** A binary part's bytes; none when it was not kept. */
  binary(callId: string, position: number): Promise<Uint8Array | undefined>;
  conversation(id: string): Promise<ConversationRecord | undefined>;
  /** A tool call's row id, by the id the model saw, within one channel (newest first). */
  callIn(channel: ChannelScope, toolCallId: string): Promise<string | undefined>;
  /** A conversation's id, by its place. */
  conversationAt(place: Place): Promise<string | undefined>;
  /** The channels of a platform that hold records (of one workspace, when it is given). */
  channels(platform: string, workspace?: string): Promise<ChannelScope[]>;
}
