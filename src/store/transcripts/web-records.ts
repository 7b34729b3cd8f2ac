import type { ChannelScope } from '../../core/ports/conversation.ts';
import { approvalOf } from './call-approval.ts';
import type {
  StoredPart,
  CallRecord,
  ConversationEntry,
  ConversationRecord,
  RecordsPort,
} from '../../core/ports/web/records.ts';
import type { PrismaClient } from '../generated/client.ts';
import { channelKeyOf } from './conversations.ts';

interface CallRow {
  id: bigint;
  conversation_id: string;
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
  tool_call_id: string;
  tool_name: string;
  arguments: string;
  turn: number;
  created_at: Date;
  approval: string | null;
  approval_by: string | null;
  approval_at: Date | null;
  approval_note: string | null;
  content: string | null;
  is_error: boolean | null;
  duration_ms: number | null;
  binaries: Array<{
    position: number;
    kind: string;
    mime_type: string | null;
    size_bytes: number;
    kept: boolean;
  }> | null;
}

const CALL_COLUMNS = `c.id, c.conversation_id::text, v.platform, v.workspace, v.channel, v.thread,
  c.tool_call_id, c.tool_name, c.arguments, c.turn, c.created_at, c.approval, c.approval_by,
  c.approval_at, c.approval_note, r.content, r.is_error, r.duration_ms,
  (SELECT json_agg(json_build_object('position', b.position, 'kind', b.kind, 'mime_type', b.mime_type,
          'size_bytes', b.size_bytes, 'kept', b.data IS NOT NULL) ORDER BY b.position)
     FROM tool_result_binaries b WHERE b.result_id = r.id) AS binaries`;

const binaryOf = (b: NonNullable<CallRow['binaries']>[number]): StoredPart => ({
  position: b.position,
  kind: b.kind,
  ...(b.mime_type ? { mimeType: b.mime_type } : {}),
  sizeBytes: b.size_bytes,
  kept: b.kept,
});

function callOf(r: CallRow): CallRecord {
  return {
    id: String(r.id),
    conversationId: r.conversation_id,
    place: { platform: r.platform, workspace: r.workspace, channel: r.channel, thread: r.thread },
    toolCallId: r.tool_call_id,
    toolName: r.tool_name,
    arguments: r.arguments,
    turn: r.turn,
    createdAt: r.created_at,
    ...approvalOf(r),
    ...(r.content === null
      ? {}
      : {
          result: {
            content: r.content,
            isError: !!r.is_error,
            durationMs: r.duration_ms ?? 0,
            binaries: (r.binaries ?? []).map(binaryOf),
          },
        }),
  };
}

/** A row id as the pages carry it: digits only, else no row. */
const rowId = (id: string): bigint | undefined => (/^\d{1,18}$/.test(id) ? BigInt(id) : undefined);

/** What Spool stored, read for the web pages: each read is one statement. */
export class WebRecords implements RecordsPort {
  constructor(private readonly prisma: PrismaClient) {}

  async call(id: string): Promise<CallRecord | undefined> {
    const key = rowId(id);
    // Else Spool's own id of the call (`call_…`, random): the address a reply's link carries.
    const where =
      key === undefined ? 'c.tool_call_id = $1 ORDER BY c.id DESC LIMIT 1' : 'c.id = $1';
    const [row] = await this.prisma.$queryRawUnsafe<CallRow[]>(
      `SELECT ${CALL_COLUMNS} FROM tool_calls c JOIN conversations v ON v.id = c.conversation_id
         LEFT JOIN tool_results r ON r.call_id = c.id WHERE ${where}`,
      key ?? id,
    );
    return row && callOf(row);
  }

  async binary(callId: string, position: number): Promise<Uint8Array | undefined> {
    const key = rowId(callId);
    if (key === undefined) return undefined;
    const [row] = await this.prisma.$queryRaw<Array<{ data: Uint8Array | null }>>`
      SELECT b.data FROM tool_result_binaries b JOIN tool_results r ON r.id = b.result_id
       WHERE r.call_id = ${key} AND b.position = ${position}`;
    return row?.data ?? undefined;
  }

  async callIn(channel: ChannelScope, toolCallId: string): Promise<string | undefined> {
    const [row] = await this.prisma.$queryRaw<Array<{ id: bigint }>>`
      SELECT id FROM tool_calls WHERE channel_key = ${channelKeyOf(channel)} AND tool_call_id = ${toolCallId}
       ORDER BY id DESC LIMIT 1`;
    return row && String(row.id);
  }

  async conversationAt(place: ConversationRecord['place']): Promise<string | undefined> {
    const [row] = await this.prisma.$queryRaw<Array<{ id: string }>>`
      SELECT id::text FROM conversations WHERE platform = ${place.platform} AND workspace = ${place.workspace}
         AND channel = ${place.channel} AND thread = ${place.thread}`;
    return row?.id;
  }

  async channels(platform: string, workspace?: string): Promise<ChannelScope[]> {
    return this.prisma.$queryRaw<ChannelScope[]>`
      SELECT DISTINCT platform, workspace, channel FROM conversations
       WHERE platform = ${platform} AND (${workspace ?? null}::text IS NULL OR workspace = ${workspace ?? null})
       ORDER BY workspace, channel`;
  }

  async conversation(id: string): Promise<ConversationRecord | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const [place] = await this.prisma.$queryRaw<ConversationRecord['place'][]>`
      SELECT platform, workspace, channel, thread FROM conversations WHERE id = ${id}::uuid`;
    if (!place) return undefined;
    const [messages, calls, requests, stops] = await Promise.all([
      this.messages(id),
      this.calls(id),
      this.requests(id),
      this.stops(id),
    ]);
    const entries = [...messages, ...calls, ...requests, ...stops].sort(
      (a, b) => a.at.getTime() - b.at.getTime(),
    );
    return { id, place, entries };
  }

  /**
   * The conversation's words. A person's message is shown at when it arrived: the turn stores it
   * only with its first step, once the model has answered.
   */
  private async messages(id: string): Promise<ConversationEntry[]> {
    const rows = await this.prisma.$queryRaw<
      Array<{
        created_at: Date;
        turn: number;
        role: string;
        content: string;
        user_id: string | null;
      }>
    >`
      SELECT CASE WHEN m.role = 'user' THEN coalesce(i.received_at, m.created_at) ELSE m.created_at END AS created_at,
             m.turn, m.role, m.content, i.user_id FROM transcript_messages m
        LEFT JOIN inbox i ON i.id = m.inbox_id
       WHERE m.conversation_id = ${id}::uuid AND m.role IN ('user', 'assistant') AND m.content <> ''
       ORDER BY m.id`;
    return rows.map((r) => ({
      kind: 'message',
      at: r.created_at,
      turn: r.turn,
      role: r.role,
      content: r.content,
      ...(r.user_id ? { person: r.user_id } : {}),
    }));
  }

  private async calls(id: string): Promise<ConversationEntry[]> {
    const rows = await this.prisma.$queryRawUnsafe<CallRow[]>(
      `SELECT ${CALL_COLUMNS} FROM tool_calls c JOIN conversations v ON v.id = c.conversation_id
         LEFT JOIN tool_results r ON r.call_id = c.id
        WHERE c.conversation_id = $1::uuid AND NOT c.derived ORDER BY c.id`,
      id,
    );
    return rows.map((r) => ({ kind: 'call', at: r.created_at, turn: r.turn, call: callOf(r) }));
  }

  private async requests(id: string): Promise<ConversationEntry[]> {
    const rows = await this.prisma.$queryRaw<
      Array<{
        created_at: Date;
        model: string;
        prompt_tokens: number;
        cached_prompt_tokens: number;
        completion_tokens: number;
        cost: string | null;
      }>
    >`
      SELECT created_at, model, prompt_tokens, cached_prompt_tokens, completion_tokens, cost::text
        FROM llm_usage WHERE conversation_id = ${id}::uuid ORDER BY id`;
    return rows.map((r) => ({
      kind: 'model_request',
      at: r.created_at,
      model: r.model,
      promptTokens: r.prompt_tokens,
      cachedPromptTokens: r.cached_prompt_tokens,
      completionTokens: r.completion_tokens,
      ...(r.cost ? { cost: r.cost } : {}),
    }));
  }

  /** Stops and edits: a message whose turn a person stopped, or that an edit superseded. */
  private async stops(id: string): Promise<ConversationEntry[]> {
    const rows = await this.prisma.$queryRaw<
      Array<{ at: Date; by: string | null; superseded: boolean; user_id: string; text: string }>
    >`
      SELECT i.stop_requested_at AS at, i.stopped_by AS by, i.superseded, i.user_id, i.text
        FROM inbox i JOIN lanes l ON l.id = i.lane_id
       WHERE l.conversation_id = ${id}::uuid AND i.stop_requested_at IS NOT NULL ORDER BY i.id`;
    return rows.map((r): ConversationEntry =>
      r.superseded
        ? { kind: 'edit', at: r.at, person: r.user_id, text: r.text }
        : { kind: 'stop', at: r.at, by: r.by ?? r.user_id },
    );
  }
}
