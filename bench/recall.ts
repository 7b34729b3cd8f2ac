/**
 * search_history on 1,000,000 stored tool events (500,000 calls + 500,000 results), against the
 * same question asked as a naive scan (ILIKE over the channel's rows), side by side in one run.
 *
 * Uses a scratch database on the PostgreSQL server at SPOOL_BENCH_POSTGRES_URL (default: the
 * local test server) and drops it afterwards. EVENTS=200000 makes a quicker run.
 *
 * Then 5 results of 10 MB each, with one rare word at their very end, are added unindexed: the
 * time the indexer takes over them, and the time search takes to find that word with the offset
 * get_continuation reads it from.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { time } from './lib/stats.ts';
import { PrismaClient } from '../src/store/generated/client.ts';
import { applyMigrations, MIGRATIONS_DIR } from '../src/store/migrate.ts';
import { HistorySearch } from '../src/store/transcripts/history-search.ts';
import { ResultIndexer } from '../src/store/transcripts/result-index.ts';
import { channelKeyOf } from '../src/store/transcripts/conversations.ts';
import { silentLogger } from '../test/support/logger.ts';

const ADMIN_URL =
  process.env.SPOOL_BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const CALLS = EVENTS / 2;
const RUNS = 40;
const timed = (fn: () => Promise<unknown>) => time(RUNS, fn);

const scope = { platform: 'slack', workspace: 'T0', channel: 'C0', thread: '' };

async function seed(client: pg.Client): Promise<void> {
  // Bulk load without the GIN indexes, then build them: what a restore would do, and 10x faster.
  await client.query(
    `DROP INDEX transcript_messages_search_idx; DROP INDEX tool_calls_search_idx; DROP INDEX tool_result_chunks_search_idx`,
  );
  // 20% of events in the searched channel C0 of workspace T0; the rest spread over 99 channels
  // of 10 workspaces. Words: a 2,000-word vocabulary; 'quasar' is rare (1 in 5,000 results).
  await client.query(`
    CREATE TEMP TABLE vocab AS SELECT array_agg('w' || i) AS words FROM generate_series(1, 2000) i;
    INSERT INTO conversations (id, platform, workspace, channel, thread)
      SELECT gen_random_uuid(), 'slack', 'T' || (c % 10), 'C' || c, 't' || t
        FROM generate_series(0, 99) c, generate_series(0, 49) t;
    CREATE TEMP TABLE conv AS SELECT id, row_number() OVER (ORDER BY channel, thread) - 1 AS n,
      '["slack","' || workspace || '","' || channel || '"]' AS channel_key FROM conversations;
  `);
  // Each call's assistant message carries a short sentence, as real ones often do ("Let me
  // check…").
  await client.query(`
    INSERT INTO transcript_messages (conversation_id, channel_key, turn, role, content, created_at)
    SELECT conv.id, conv.channel_key, 1, 'assistant',
           'let me check ' || v.words[1 + (i * 17) % 2000] || ' ' || v.words[1 + (i * 29) % 2000] || ' ' || v.words[1 + (i * 41) % 2000],
           now() - (i || ' seconds')::interval
      FROM generate_series(1, ${CALLS}) i
      JOIN conv ON conv.n = CASE WHEN i % 5 = 0 THEN (i / 5) % 50 ELSE 50 + (i % 4950) END
      CROSS JOIN vocab v`);
  await client.query(`
    INSERT INTO tool_calls (conversation_id, channel_key, message_id, tool_call_id, tool_name, arguments, turn, created_at)
    SELECT m.conversation_id, m.channel_key, m.id, 'call_' || m.id, (ARRAY['fs__read_file','fs__list_directory','git__log','http__get'])[1 + m.id % 4],
           '{"path":"/srv/' || v.words[1 + (m.id * 7) % 2000] || '/' || v.words[1 + (m.id * 13) % 2000] || '.txt"}',
           1, m.created_at
      FROM transcript_messages m, vocab v`);
  await client.query(`
    CREATE TEMP TABLE texts AS SELECT n, (SELECT string_agg(words[1 + ((n * k * 31) % 2000)], ' ') FROM vocab, generate_series(1, 60) k) AS body
      FROM generate_series(0, 1999) n;
    INSERT INTO tool_results (call_id, channel_key, tool_name, content, content_chars, is_error, duration_ms, created_at, indexed)
    SELECT c.id, c.channel_key, c.tool_name, t.body || CASE WHEN c.id % 5000 = 0 THEN ' quasar' ELSE '' END,
           400, false, 12, c.created_at + interval '1 second', true
      FROM tool_calls c JOIN texts t ON t.n = c.id % 2000`);
  // What the indexer writes for a result shorter than one piece.
  await client.query(`
    INSERT INTO tool_result_chunks (result_id, start_offset, channel_key, created_at, body, search)
    SELECT id, 0, channel_key, created_at, content, to_tsvector('simple', regexp_replace(tool_name || ' ' || content, '[^[:alnum:]]+', ' ', 'g'))
      FROM tool_results`);
  await client.query(`
    CREATE INDEX "transcript_messages_search_idx" ON "transcript_messages" USING GIN ("search");
    CREATE INDEX "tool_calls_search_idx" ON "tool_calls" USING GIN ("search");
    CREATE INDEX "tool_result_chunks_search_idx" ON "tool_result_chunks" USING GIN ("search");
    ANALYZE`);
}

const HUGE_LINE = 'row of an export with nothing in it\n';
const HUGE_CHARS = 10 * 1024 * 1024;

async function searchHugeResults(
  pool: pg.Pool,
  prisma: PrismaClient,
  store: HistorySearch,
): Promise<void> {
  const repeats = Math.floor(HUGE_CHARS / HUGE_LINE.length);
  await pool.query(
    `WITH src AS (SELECT conversation_id, channel_key FROM transcript_messages WHERE channel_key = $1 LIMIT 1),
     m AS (INSERT INTO transcript_messages (conversation_id, channel_key, turn, role, content, created_at)
           SELECT conversation_id, channel_key, 1, 'assistant', 'exporting everything', now() FROM src, generate_series(1, 5)
           RETURNING id, conversation_id, channel_key, created_at),
     c AS (INSERT INTO tool_calls (conversation_id, channel_key, message_id, tool_call_id, tool_name, arguments, turn, created_at)
           SELECT conversation_id, channel_key, id, 'huge_' || id, 'db__export', '{}', 1, created_at FROM m
           RETURNING id, channel_key, tool_name, created_at)
     INSERT INTO tool_results (call_id, channel_key, tool_name, content, content_chars, is_error, duration_ms, created_at, indexed)
     SELECT id, channel_key, tool_name, repeat($2, $3) || 'zircon', $4, false, 1, created_at, false FROM c`,
    [channelKeyOf(scope), HUGE_LINE, repeats, repeats * HUGE_LINE.length + 6],
  );
  const started = performance.now();
  await new ResultIndexer({ prisma, pool }, silentLogger).indexPending();
  const indexMs = performance.now() - started;
  const hits = await store.searchHistory(scope, { text: 'zircon', maxResults: 10 });
  const right = hits.length === 5 && hits.every((h) => h.offset === repeats * HUGE_LINE.length);
  const search = await timed(() => store.searchHistory(scope, { text: 'zircon', maxResults: 10 }));
  console.log(
    `\n5 results of ${(HUGE_CHARS / 1024 / 1024).toFixed(0)} MB, a word at the end of each: indexed in ${(indexMs / 1000).toFixed(1)} s (${((5 * HUGE_CHARS) / 1024 / 1024 / (indexMs / 1000)).toFixed(1)} MB/s)`,
  );
  console.log(
    `found with search_history in ${search.median.toFixed(1)} / ${search.p95.toFixed(1)} ms (median / p95), every offset right: ${right ? 'yes' : 'NO'}`,
  );
}

async function main(): Promise<void> {
  // SPOOL_BENCH_KEEP=name keeps (and on later runs reuses) the seeded database, for EXPLAIN.
  const kept = process.env.SPOOL_BENCH_KEEP;
  const name = kept ?? `spool_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const exists =
    (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  if (!exists) await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  try {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await applyMigrations(client, MIGRATIONS_DIR);
    const seeded = performance.now();
    if (!exists) await seed(client);
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM tool_calls) + (SELECT count(*) FROM tool_results) AS events,
      (SELECT count(*) FROM tool_results WHERE channel_key = $1) AS in_channel`,
      [channelKeyOf(scope)],
    );
    console.log(
      `seeded ${rows[0].events} tool events (${rows[0].in_channel} results in the searched channel) in ${((performance.now() - seeded) / 1000).toFixed(0)} s\n`,
    );
    await client.end();

    const store = new HistorySearch(prisma, new ResultIndexer({ prisma, pool }, silentLogger));
    // The same question as a scan: every word must occur (ILIKE), newest 10 of each kind.
    const naive = (words: string[]) => {
      const like = (column: string) =>
        words.map((_, i) => `${column} ILIKE $${i + 2}`).join(' AND ');
      return pool.query(
        `(SELECT created_at FROM tool_results WHERE channel_key = $1 AND ${like('content')} ORDER BY created_at DESC LIMIT 10)
         UNION ALL (SELECT created_at FROM tool_calls WHERE channel_key = $1 AND ${like('(tool_name || arguments)')} ORDER BY created_at DESC LIMIT 10)
         UNION ALL (SELECT created_at FROM transcript_messages WHERE channel_key = $1 AND ${like('content')} ORDER BY created_at DESC LIMIT 10)
         ORDER BY 1 DESC LIMIT 10`,
        [channelKeyOf(scope), ...words.map((w) => `%${w}%`)],
      );
    };

    console.log(
      'query                 | search_history median / p95 | naive scan median / p95 | naive / indexed (p95)',
    );
    console.log(
      '----------------------|-----------------------------|-------------------------|----------------------',
    );
    for (const [label, query] of [
      ['rare word', 'quasar'],
      ['common word', 'w7'],
      ['two words', 'w7 w1031'],
      ['tool name', 'list_directory'],
      ['no match', 'nonexistentword'],
    ] as const) {
      const indexed = await timed(() =>
        store.searchHistory(scope, { text: query, maxResults: 10 }),
      );
      const scan = await timed(() => naive(query.split(' ')));
      console.log(
        `${label.padEnd(21)} | ${indexed.median.toFixed(1).padStart(9)} / ${indexed.p95.toFixed(1).padEnd(7)} ms | ${scan.median.toFixed(1).padStart(9)} / ${scan.p95.toFixed(1).padEnd(7)} ms | ${(scan.p95 / indexed.p95).toFixed(1)}x`,
      );
    }
    await searchHugeResults(pool, prisma, store);
  } finally {
    await prisma.$disconnect();
    await pool.end();
    if (!kept) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

await main();
