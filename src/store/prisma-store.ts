import { safeSlice } from '../core/text.ts';
import type {
  ChannelScope,
  Conversation,
  ConversationKey,
  HistoryEntryKind,
  HistoryHit,
  HistoryQuery,
  HistorySearchPort,
  LlmUsage,
  Message,
  StorePort,
  ToolCall,
  ToolResultRecord,
} from '../core/types.ts';
import { Prisma, type PrismaClient } from './generated/client.ts';

/** Tools whose calls and results are views of other rows; searching them only finds echoes. */
const UNSEARCHED_TOOLS = ['get_continuation', 'search_history'];

/** Scope of search and continuation lookup: one channel of one workspace of one platform. */
export const channelKeyOf = (key: ChannelScope): string => JSON.stringify([key.platform, key.workspace, key.channel]);

const toConversation = (row: Conversation): Conversation => ({
  id: row.id,
  platform: row.platform,
  workspace: row.workspace,
  channel: row.channel,
  thread: row.thread,
});

export function capStoredResult(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  return `${safeSlice(content, 0, maxChars)}\n[Spool stored only the first ${maxChars} of ${content.length} chars of this result (TOOL_RESULT_STORE_MAX_CHARS)]`;
}

/** Query words, split the way the indexed text is (on anything but letters and digits). */
function queryWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

interface SearchRow {
  kind: HistoryEntryKind;
  tool_name: string | null;
  tool_call_id: string | null;
  created_at: Date;
  thread: string;
  excerpt: string;
  before_role: string | null;
  before_text: string | null;
  after_role: string | null;
  after_text: string | null;
}

export class PrismaStore implements StorePort, HistorySearchPort {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly options: { storeMaxChars: number },
  ) {}

  async openConversation(key: ConversationKey): Promise<Conversation> {
    const row = await this.prisma.conversation.upsert({
      where: { platform_workspace_channel_thread: key },
      create: key,
      update: {},
    });
    return toConversation(row);
  }

  async loadTranscript(conversation: Conversation): Promise<Message[]> {
    const rows = await this.prisma.transcriptMessage.findMany({ where: { conversationId: conversation.id }, orderBy: { id: 'asc' } });
    return rows.map((row): Message => {
      switch (row.role) {
        case 'tool':
          return { role: 'tool', toolCallId: row.toolCallId ?? '', content: row.content, turn: row.turn };
        case 'assistant': {
          const toolCalls = row.toolCalls as unknown as ToolCall[] | null;
          return toolCalls?.length
            ? { role: 'assistant', content: row.content, toolCalls, turn: row.turn }
            : { role: 'assistant', content: row.content, turn: row.turn };
        }
        default:
          return row.inboxId === null
            ? { role: 'user', content: row.content, turn: row.turn }
            : { role: 'user', content: row.content, turn: row.turn, inboxId: String(row.inboxId) };
      }
    });
  }

  async appendMessages(conversation: Conversation, messages: Message[]): Promise<void> {
    const channelKey = channelKeyOf(conversation);
    await this.prisma.$transaction(async (tx) => {
      for (const m of messages) {
        const toolCalls = m.role === 'assistant' && m.toolCalls?.length ? m.toolCalls : undefined;
        const row = await tx.transcriptMessage.create({
          data: {
            conversationId: conversation.id,
            channelKey,
            turn: m.turn,
            role: m.role,
            content: m.content,
            toolCalls: toolCalls ? (toolCalls as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
            toolCallId: m.role === 'tool' ? m.toolCallId : null,
            inboxId: m.role === 'user' && m.inboxId !== undefined ? BigInt(m.inboxId) : null,
          },
          select: { id: true },
        });
        if (toolCalls) {
          await tx.toolCall.createMany({
            data: toolCalls.map((c) => ({
              conversationId: conversation.id,
              channelKey,
              messageId: row.id,
              toolCallId: c.id,
              modelCallId: c.modelId ?? null,
              toolName: c.name,
              arguments: c.arguments,
              turn: m.turn,
            })),
          });
        }
      }
      await tx.conversation.update({ where: { id: conversation.id }, data: { updatedAt: new Date() } });
    });
  }

  async recordToolResult(conversation: Conversation, result: ToolResultRecord): Promise<void> {
    const call = await this.prisma.toolCall.findUniqueOrThrow({
      where: { conversationId_toolCallId: { conversationId: conversation.id, toolCallId: result.toolCallId } },
      select: { id: true, toolName: true },
    });
    await this.prisma.toolResult.create({
      data: {
        callId: call.id,
        toolName: call.toolName,
        channelKey: channelKeyOf(conversation),
        content: capStoredResult(result.content, this.options.storeMaxChars),
        contentChars: result.content.length,
        isError: result.isError,
        durationMs: Math.round(result.durationMs),
      },
    });
  }

  async readToolResult(conversation: Conversation, toolCallId: string): Promise<string | undefined> {
    const own = await this.prisma.toolResult.findFirst({
      where: { call: { conversationId: conversation.id, toolCallId } },
      select: { content: true },
    });
    if (own) return own.content;
    const sibling = await this.prisma.toolResult.findFirst({
      where: { channelKey: channelKeyOf(conversation), call: { toolCallId } },
      orderBy: { id: 'desc' },
      select: { content: true },
    });
    return sibling?.content;
  }

  async recordUsage(conversation: Conversation, usage: LlmUsage): Promise<void> {
    await this.prisma.llmUsage.create({ data: { conversationId: conversation.id, ...usage } });
  }

  async searchHistory(scope: ChannelScope, query: HistoryQuery): Promise<HistoryHit[]> {
    const key = channelKeyOf(scope);
    const limit = query.maxResults;
    const since = new Date(Date.now() - (query.days ?? 36500) * 86_400_000);
    const words = queryWords(query.text);
    if (words.length === 0) return [];
    // Every word must match as a prefix; the words hold only letters and digits, so this
    // tsquery text cannot carry operators.
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    const excluded = query.excludeTurn ?? { conversationId: '00000000-0000-0000-0000-000000000000', turn: -1 };
    // Each branch is its own index-backed top-N (GIN match, or the channel/time index when the
    // words are common); only the final N rows get excerpts and context.
    const rows = await this.prisma.$queryRaw<SearchRow[]>`
      WITH hits AS (
        (SELECT m.role AS kind, m.id AS anchor, m.conversation_id, NULL::text AS tool_name, NULL::text AS tool_call_id,
                m.content AS body, m.created_at
           FROM transcript_messages m
          WHERE m.channel_key = ${key} AND m.created_at >= ${since}
            AND m.search @@ to_tsquery('simple', ${tsquery})
            AND NOT (m.conversation_id = ${excluded.conversationId}::uuid AND m.turn = ${excluded.turn})
          ORDER BY m.created_at DESC LIMIT ${limit})
        UNION ALL
        (SELECT 'tool_call', c.message_id, c.conversation_id, c.tool_name, c.tool_call_id, c.arguments, c.created_at
           FROM tool_calls c
          WHERE c.channel_key = ${key} AND c.created_at >= ${since}
            AND c.search @@ to_tsquery('simple', ${tsquery})
            AND c.tool_name <> ALL(${UNSEARCHED_TOOLS})
          ORDER BY c.created_at DESC LIMIT ${limit})
        UNION ALL
        (SELECT 'tool_result', c.message_id, c.conversation_id, c.tool_name, c.tool_call_id, r.content, r.created_at
           FROM tool_results r JOIN tool_calls c ON c.id = r.call_id
          WHERE r.channel_key = ${key} AND r.created_at >= ${since}
            AND r.search @@ to_tsquery('simple', ${tsquery})
            AND c.tool_name <> ALL(${UNSEARCHED_TOOLS})
          ORDER BY r.created_at DESC LIMIT ${limit})
      )
      SELECT h.kind, h.tool_name, h.tool_call_id, h.created_at, v.thread,
             substr(left(h.body, 100000), greatest(1, strpos(lower(left(h.body, 100000)), ${words[0]}) - 120), 300) AS excerpt,
             b.role AS before_role, left(b.content, 300) AS before_text,
             a.role AS after_role, left(a.content, 300) AS after_text
        FROM (SELECT * FROM hits ORDER BY created_at DESC, anchor DESC LIMIT ${limit}) h
        JOIN conversations v ON v.id = h.conversation_id
        LEFT JOIN LATERAL (
          SELECT t.role, t.content FROM transcript_messages t
           WHERE t.conversation_id = h.conversation_id AND t.id < h.anchor AND t.role IN ('user', 'assistant') AND t.content <> ''
           ORDER BY t.id DESC LIMIT 1) b ON true
        LEFT JOIN LATERAL (
          SELECT t.role, t.content FROM transcript_messages t
           WHERE t.conversation_id = h.conversation_id AND t.id > h.anchor AND t.role IN ('user', 'assistant') AND t.content <> ''
           ORDER BY t.id ASC LIMIT 1) a ON true
       ORDER BY h.created_at DESC, h.anchor DESC`;
    return rows.map((r) => ({
      kind: r.kind,
      createdAt: r.created_at,
      thread: r.thread,
      ...(r.tool_name ? { toolName: r.tool_name } : {}),
      ...(r.tool_call_id ? { toolCallId: r.tool_call_id } : {}),
      excerpt: safeSlice(r.excerpt, 0, 300),
      ...(r.before_role ? { before: { role: r.before_role, text: r.before_text ?? '' } } : {}),
      ...(r.after_role ? { after: { role: r.after_role, text: r.after_text ?? '' } } : {}),
    }));
  }
}
