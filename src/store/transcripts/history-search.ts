import { safeSlice } from '../../core/text.ts';
import { approvalOf } from './call-approval.ts';
import type { ChannelScope } from '../../core/ports/conversation.ts';
import type {
  HistoryEntryKind,
  HistoryHit,
  HistoryQuery,
  HistorySearchPort,
  StoredResult,
} from '../../core/ports/history.ts';
import { storedResultIn } from './stored-result.ts';
import { Prisma, type PrismaClient } from '../generated/client.ts';
import { NOT_ASTRAL, type ResultIndexer } from './result-index.ts';
import { channelKeyOf } from './conversations.ts';

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
  match_offset: number | null;
  before_role: string | null;
  before_text: string | null;
  after_role: string | null;
  after_text: string | null;
  approval: string | null;
  approval_by: string | null;
  approval_at: Date | null;
  person: string | null;
}

/**
 * Full-text search over a channel's transcripts, tool calls and every character of its tool
 * results.
 */
export class HistorySearch implements HistorySearchPort {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly indexer: ResultIndexer,
  ) {}

  storedResult(scope: ChannelScope, toolCallId: string): Promise<StoredResult | undefined> {
    return storedResultIn(this.prisma, scope, toolCallId);
  }

  async searchHistory(scope: ChannelScope, query: HistoryQuery): Promise<HistoryHit[]> {
    const key = channelKeyOf(scope);
    const limit = query.maxResults;
    const since = new Date(Date.now() - (query.days ?? 36500) * 86_400_000);
    const words = queryWords(query.text);
    if (words.length === 0) return [];
    // Results stored since the indexer last ran are indexed now: nothing stored is unfindable.
    await this.indexer.indexPending();
    // Every word must match as a prefix; the words hold only letters and digits, so this
    // tsquery text cannot carry operators.
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    const excluded = query.excludeTurn ?? {
      conversationId: '00000000-0000-0000-0000-000000000000',
      turn: -1,
    };
    // The filters are the query's, not a sieve over its newest hits: a tool, server or person
    // whose hits are older than the newest N of the channel is still found.
    const tool = query.tool ?? null;
    const toolPrefix = query.server ? `${query.server}__` : null;
    const person = query.person ?? null;
    const ofTool = (c: string) =>
      Prisma.sql`(${tool}::text IS NULL OR ${Prisma.raw(c)}.tool_name = ${tool})
        AND (${toolPrefix}::text IS NULL OR starts_with(${Prisma.raw(c)}.tool_name, ${toolPrefix}))`;
    const ofPerson = (row: string) =>
      Prisma.sql`(${person}::text IS NULL OR EXISTS (
        SELECT 1 FROM transcript_messages um JOIN inbox i ON i.id = um.inbox_id
         WHERE um.conversation_id = ${Prisma.raw(row)}.conversation_id AND um.turn = ${Prisma.raw(row)}.turn
           AND i.user_id = ${person}))`;
    // Each branch is its own index-backed top-N (GIN match, or the channel/time index when the
    // words are common); only the final N rows get excerpts and context. A result's hit is the
    // first of its pieces that matches; its body is that piece, and the match offset is the
    // piece's offset plus the UTF-16 length of the text before the match.
    const rows = await this.prisma.$queryRaw<SearchRow[]>`
      WITH hits AS (
        (SELECT m.role AS kind, m.id AS anchor, m.conversation_id, NULL::text AS tool_name, NULL::text AS tool_call_id,
                left(m.content, 100000) AS body, NULL::int AS base_offset, m.created_at
           FROM transcript_messages m
          WHERE m.channel_key = ${key} AND m.created_at >= ${since}
            AND m.search @@ to_tsquery('simple', ${tsquery})
            AND NOT (m.conversation_id = ${excluded.conversationId}::uuid AND m.turn = ${excluded.turn})
            AND ${tool}::text IS NULL AND ${toolPrefix}::text IS NULL AND ${ofPerson('m')}
          ORDER BY m.created_at DESC LIMIT ${limit})
        UNION ALL
        (SELECT 'tool_call', c.message_id, c.conversation_id, c.tool_name, c.tool_call_id, left(c.arguments, 100000), NULL, c.created_at
           FROM tool_calls c
          WHERE c.channel_key = ${key} AND c.created_at >= ${since}
            AND c.search @@ to_tsquery('simple', ${tsquery})
            AND NOT c.derived AND ${ofTool('c')} AND ${ofPerson('c')}
          ORDER BY c.created_at DESC LIMIT ${limit})
        UNION ALL
        (SELECT 'tool_result', c.message_id, c.conversation_id, c.tool_name, c.tool_call_id,
                p.body, p.start_offset, p.created_at
           FROM (SELECT DISTINCT ON (k.result_id) k.result_id, k.start_offset, k.body, k.created_at
                   FROM (SELECT k.* FROM tool_result_chunks k
                          WHERE k.channel_key = ${key} AND k.created_at >= ${since} AND k.search @@ to_tsquery('simple', ${tsquery})
                            AND (${tool}::text IS NULL AND ${toolPrefix}::text IS NULL AND ${person}::text IS NULL
                                 OR EXISTS (SELECT 1 FROM tool_results fr JOIN tool_calls c ON c.id = fr.call_id
                                             WHERE fr.id = k.result_id AND ${ofTool('c')} AND ${ofPerson('c')}))
                          ORDER BY k.created_at DESC LIMIT ${limit * 20}) k
                  ORDER BY k.result_id, k.start_offset) p
           JOIN tool_results r ON r.id = p.result_id JOIN tool_calls c ON c.id = r.call_id
          ORDER BY p.created_at DESC LIMIT ${limit})
      )
      SELECT h.kind, h.tool_name, h.tool_call_id, h.created_at, v.thread,
             substr(h.body, greatest(1, strpos(lower(h.body), ${words[0]}) - 120), 300) AS excerpt,
             h.base_offset + char_length(regexp_replace(left(h.body, greatest(strpos(lower(h.body), ${words[0]}) - 1, 0)), ${NOT_ASTRAL}, '', 'g'))
               + greatest(strpos(lower(h.body), ${words[0]}) - 1, 0) AS match_offset,
             b.role AS before_role, left(b.content, 300) AS before_text,
             a.role AS after_role, left(a.content, 300) AS after_text,
             d.approval, d.approval_by, d.approval_at, p.user_id AS person
        FROM (SELECT * FROM hits ORDER BY created_at DESC, anchor DESC LIMIT ${limit}) h
        JOIN conversations v ON v.id = h.conversation_id
        LEFT JOIN tool_calls d ON d.conversation_id = h.conversation_id AND d.tool_call_id = h.tool_call_id
        LEFT JOIN LATERAL (
          SELECT t.role, t.content FROM transcript_messages t
           WHERE t.conversation_id = h.conversation_id AND t.id < h.anchor AND t.role IN ('user', 'assistant') AND t.content <> ''
           ORDER BY t.id DESC LIMIT 1) b ON true
        LEFT JOIN LATERAL (
          SELECT t.role, t.content FROM transcript_messages t
           WHERE t.conversation_id = h.conversation_id AND t.id > h.anchor AND t.role IN ('user', 'assistant') AND t.content <> ''
           ORDER BY t.id ASC LIMIT 1) a ON true
        LEFT JOIN LATERAL (
          SELECT i.user_id FROM transcript_messages am
            JOIN transcript_messages um ON um.conversation_id = am.conversation_id AND um.turn = am.turn AND um.inbox_id IS NOT NULL
            JOIN inbox i ON i.id = um.inbox_id
           WHERE am.id = h.anchor LIMIT 1) p ON true
       ORDER BY h.created_at DESC, h.anchor DESC`;
    return rows.map(hitOf);
  }
}

/** A search row as the port's hit. */
function hitOf(r: SearchRow): HistoryHit {
  return {
    kind: r.kind,
    createdAt: r.created_at,
    thread: r.thread,
    ...(r.tool_name ? { toolName: r.tool_name } : {}),
    ...(r.tool_call_id ? { toolCallId: r.tool_call_id } : {}),
    ...(r.match_offset === null ? {} : { offset: r.match_offset }),
    ...(r.person ? { person: r.person } : {}),
    excerpt: safeSlice(r.excerpt, 0, 300),
    ...(r.before_role ? { before: { role: r.before_role, text: r.before_text ?? '' } } : {}),
    ...(r.after_role ? { after: { role: r.after_role, text: r.after_text ?? '' } } : {}),
    ...approvalOf(r),
  };
}
