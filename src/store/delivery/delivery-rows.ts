import type {
  InboundFile,
  InboundKind,
  InboxEntry,
  ReplyChunk,
  ReplyLink,
  StopKind,
} from '../../core/ports/platform/delivery.ts';
import type { OutboxChunk } from '../generated/client.ts';

// The inbox's and outbox's rows as the delivery ledger's statements return them, and their
// mapping to the port's types.

export interface InboxRow {
  /** int8: a bigint from Prisma, a string from the pool (see runOnPool). */
  id: bigint | string;
  lane_id: bigint | string;
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
  message_key: string;
  kind: string;
  user_id: string;
  text: string;
  delivery: Record<string, string>;
  files: InboundFile[] | null;
  attempts: number;
}

export interface PendingRow extends InboxRow {
  due: boolean;
  reply_saved: boolean;
  stopped: StopKind | null;
  conversation_id: string | null;
  c_platform: string;
  c_workspace: string;
  c_channel: string;
  c_thread: string;
  /** Set where the statement linked the lane to a conversation (see nextPending). */
  linked_id: string | null;
  linked_created: boolean | null;
}

export const toEntry = (r: InboxRow): InboxEntry => ({
  id: String(r.id),
  laneId: String(r.lane_id),
  lane: { platform: r.platform, workspace: r.workspace, channel: r.channel, thread: r.thread },
  messageKey: r.message_key,
  kind: r.kind as InboundKind,
  user: r.user_id,
  text: r.text,
  delivery: r.delivery,
  ...(r.files?.length ? { files: r.files } : {}),
  attempts: r.attempts,
});

export type ChunkRow = Pick<
  OutboxChunk,
  | 'id'
  | 'seq'
  | 'text'
  | 'fileName'
  | 'fileContent'
  | 'fileLanguage'
  | 'links'
  | 'toolCallId'
  | 'platformMessageId'
>;

export const toChunk = (r: ChunkRow): ReplyChunk => ({
  id: String(r.id),
  seq: r.seq,
  text: r.text,
  ...(r.fileName === null
    ? {}
    : {
        file: {
          name: r.fileName,
          content: r.fileContent ?? '',
          ...(r.fileLanguage ? { language: r.fileLanguage } : {}),
        },
      }),
  ...(Array.isArray(r.links) ? { links: r.links as unknown as ReplyLink[] } : {}),
  ...(r.toolCallId === null ? {} : { approval: { toolCallId: r.toolCallId } }),
  ...(r.platformMessageId ? { platformMessageId: r.platformMessageId } : {}),
});
