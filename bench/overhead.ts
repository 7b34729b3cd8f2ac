/**
 * Spool's own work per turn: a turn of 3 tool calls in a conversation of 50, 500 and 2,000
 * messages, against a model that answers at once, so what is timed is Spool's: the store, the
 * transforms and the HTTP client (the fake model runs in a process of its own). Side by side in the same run, the same agent over an in-memory
 * store: the floor that no database can beat. Each turn adds 8 messages to its conversation.
 *
 * Databases: an embedded server in a scratch directory, and a scratch database on the PostgreSQL
 * server at SPOOL_BENCH_POSTGRES_URL (default: the local test server). TURNS=40 by default.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../src/core/agent/agent.ts';
import type { Conversation } from '../src/core/ports/conversation.ts';
import type { StorePort } from '../src/core/ports/store.ts';
import { OpenAiChatClient } from '../src/llm/openai-client.ts';
import { openDatabase, type Database } from '../src/store/database.ts';
import { TranscriptStore } from '../src/store/transcript-store.ts';
import { builtinSource } from '../src/tools/registry.ts';
import { defaultAgentOptions, toolsWithPages } from '../test/support/agent.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { silentLogger } from '../test/support/logger.ts';
import { MemoryStore } from '../test/support/memory-store.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess, THREE_TOOLS } from './lib/llm-process.ts';
import { ms, time, type Timing } from './lib/stats.ts';

const SIZES = [50, 500, 2_000];
const TURNS = Number(process.env.TURNS ?? 40);
const LLM_CALL_MS = 500;
const RESULT = `${'a line of tool output, as a listing or a log would have it\n'.repeat(35)}`;

/** `size` messages of earlier turns: a question, a tool call, its 2 kB result, an answer. */
async function seed(store: StorePort, conversation: Conversation, size: number): Promise<void> {
  for (let turn = 1; turn <= size / 4; turn++) {
    const id = `call_seed_${turn}`;
    await store.appendMessages(conversation, [
      { role: 'user', content: `question ${turn}`, turn },
      { role: 'assistant', content: '', toolCalls: [{ id, name: 'read', arguments: '{"path":"notes.md"}' }], turn },
    ]);
    await store.appendMessages(conversation, [{ role: 'tool', toolCallId: id, content: RESULT, turn }], {
      results: [{ toolCallId: id, content: RESULT, isError: false, durationMs: 1 }],
    });
    await store.appendMessages(conversation, [{ role: 'assistant', content: `answer ${turn}`, turn }]);
  }
}

async function measure(llm: { baseURL: string }, store: StorePort, size: number): Promise<Timing> {
  const client = new OpenAiChatClient({ apiKey: 'sk-bench', baseURL: llm.baseURL, model: 'bench', maxTokens: 256, maxRetries: 0, timeoutMs: 10_000 });
  const tools = THREE_TOOLS.map((name) => ({
    spec: { name, description: name, parameters: { type: 'object', properties: {} } },
    run: async () => ({ content: RESULT, isError: false }),
  }));
  const agent = new Agent({ llm: client, tools: toolsWithPages(store, [builtinSource(tools)]), store, logger: silentLogger }, defaultAgentOptions);
  const conversation = await store.openConversation({ platform: 'bench', workspace: `w${process.pid}`, channel: 'c', thread: `${size}-${Math.random()}` });
  await seed(store, conversation, size);
  return time(TURNS, () => agent.runTurn(conversation, 'what do the three files say?'));
}

async function withDatabases(run: (name: string, db: Database) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-bench-'));
  const embedded = await openDatabase({ dataDir: dir, logger: silentLogger });
  const scratch = await createScratchDatabase('spool_bench_overhead');
  const server = await openDatabase({ databaseUrl: scratch.url, dataDir: '', logger: silentLogger });
  try {
    await run('embedded', embedded);
    await run('PostgreSQL', server);
  } finally {
    await Promise.all([embedded.close(), server.close()]);
    await scratch.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

const llm = await startLlmProcess('tools');

const rows: Array<{ db: string; size: number; t: Timing; floor: Timing }> = [];
await withDatabases(async (name, db) => {
  for (const size of SIZES) {
    // The floor is measured right beside each database figure, so both see the same machine load.
    const floor = await measure(llm, new MemoryStore(), size);
    const t = await measure(llm, new TranscriptStore(db.prisma), size);
    rows.push({ db: name, size, t, floor });
  }
});
llm.stop();

console.log(`\nOwn work per turn (3 tool calls, model answers at once), ${TURNS} turns each:\n`);
console.log('| database | messages | median | p99 | p99 / 500 ms LLM call | in-memory floor median / p99 | p99 / floor p99 |');
console.log('|---|---|---|---|---|---|---|');
for (const { db, size, t, floor } of rows) {
  console.log(`| ${db} | ${size} | ${ms(t.median)} | ${ms(t.p99)} | ${((100 * t.p99) / LLM_CALL_MS).toFixed(1)}% | ${ms(floor.median)} / ${ms(floor.p99)} | ${(t.p99 / floor.p99).toFixed(1)}x |`);
}

const series = (db: string) => SIZES.map((size) => Number(rows.find((r) => r.db === db && r.size === size)!.t.p99.toFixed(1)));
await renderChart(new URL('charts/overhead.png', import.meta.url).pathname, {
  title: { text: 'Own work per turn, p99 (ms)', left: 'center' },
  legend: { top: 30 },
  grid: { top: 70 },
  xAxis: { type: 'category', name: 'messages', data: SIZES.map(String) },
  yAxis: { type: 'value', name: 'ms' },
  series: [
    { name: 'embedded', type: 'bar', data: series('embedded') },
    { name: 'PostgreSQL', type: 'bar', data: series('PostgreSQL') },
    { name: 'in-memory floor', type: 'bar', data: SIZES.map((size) => Number(rows.find((r) => r.db === 'embedded' && r.size === size)!.floor.p99.toFixed(1))) },
  ],
});
console.log('\nchart: bench/charts/overhead.png');
