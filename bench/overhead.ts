/**
 * Spool's own work per turn: a turn of 3 tool calls in a conversation of 50, 500 and 2,000
 * messages, against a model that answers at once, so what is timed is Spool's: the store, the
 * transforms and the HTTP client (the fake model runs in a process of its own). Side by side in the
 * same run, turn for turn, the same agent over an in-memory store: the floor that no database can
 * beat.
 *
 * SAMPLES (default 200) timed turns per size and store, spread over 25 conversations seeded to the
 * size, so that each grows by only 8 turns of 8 messages; each conversation first has one untimed
 * turn, so that what is timed is a turn of a conversation already in use, not a cold read.
 *
 * Databases: an embedded server in a scratch directory, and a scratch database on the PostgreSQL
 * server at SPOOL_BENCH_POSTGRES_URL (default: the local test server).
 *
 * Tracing: beside them, turn for turn, the same turns traced (OTEL_EXPORTER_OTLP_ENDPOINT set, a
 * receiver in a process of its own), so that what tracing costs a turn is read off the same run.
 */
import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../src/core/agent/agent.ts';
import type { Conversation } from '../src/core/ports/conversation.ts';
import type { StorePort } from '../src/core/ports/store.ts';
import { OpenAiChatClient } from '../src/llm/openai-client.ts';
import { startTracing, UNTRACED, type Tracing } from '../src/tracing.ts';
import { openDatabase, type Database } from '../src/store/database.ts';
import { TranscriptStore } from '../src/store/transcripts/transcript-store.ts';
import { builtinSource } from '../src/tools/registry.ts';
import { defaultAgentOptions, toolsWithPages } from '../test/support/agent.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { silentLogger } from '../test/support/logger.ts';
import { MemoryStore } from '../test/support/memory-store.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess, THREE_TOOLS } from './lib/llm-process.ts';
import { startOtlpSink } from './lib/otlp-sink.ts';
import { ms, timingOf, type Timing } from './lib/stats.ts';

const SIZES = [50, 500, 2_000];
const SAMPLES = Number(process.env.SAMPLES ?? 200);
const CONVERSATIONS = 25;
const LLM_CALL_MS = 500;
const RESULT = `${'a line of tool output, as a listing or a log would have it\n'.repeat(35)}`;

/**
 * `size` messages of earlier turns (a question, a tool call, its 2 kB result, an answer), in two
 * writes.
 */
async function seed(store: StorePort, conversation: Conversation, size: number): Promise<void> {
  const turns = Array.from({ length: size / 4 }, (_, i) => ({
    turn: i + 1,
    id: `call_seed_${i + 1}`,
  }));
  await store.appendMessages(
    conversation,
    turns.flatMap(({ turn, id }) => [
      { role: 'user' as const, content: `question ${turn}`, turn },
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ id, name: 'read', arguments: '{"path":"notes.md"}' }],
        turn,
      },
      { role: 'tool' as const, toolCallId: id, content: RESULT, turn },
      { role: 'assistant' as const, content: `answer ${turn}`, turn },
    ]),
  );
  // Results join calls already stored, so they follow in a write of their own.
  await store.appendMessages(conversation, [], {
    results: turns.map(({ id }) => ({
      toolCallId: id,
      content: RESULT,
      isError: false,
      durationMs: 1,
    })),
  });
}

/**
 * A turn of one of `CONVERSATIONS` conversations of `size` messages, by number, each used once
 * already; through `tracing`'s decorators, as src/main.ts wires them.
 */
async function turnsOf(
  llm: { baseURL: string },
  store: StorePort,
  size: number,
  tracing: Tracing = UNTRACED,
): Promise<(n: number) => Promise<unknown>> {
  const client = new OpenAiChatClient({
    apiKey: 'sk-bench',
    baseURL: llm.baseURL,
    model: 'bench',
    maxTokens: 256,
    maxRetries: 0,
    timeoutMs: 10_000,
  });
  const tools = THREE_TOOLS.map((name) => ({
    spec: { name, description: name, parameters: { type: 'object', properties: {} } },
    run: async () => ({ content: RESULT, isError: false }),
  }));
  const agent = tracing.turns(
    new Agent(
      {
        llm: tracing.llm(client, { model: 'bench' }),
        tools: tracing.tools(toolsWithPages(store, [builtinSource(tools)])),
        store,
        logger: silentLogger,
      },
      defaultAgentOptions,
    ),
  );
  const conversations: Conversation[] = [];
  for (let i = 0; i < CONVERSATIONS; i++) {
    const conversation = await store.openConversation({
      platform: 'bench',
      workspace: `w${process.pid}`,
      channel: 'c',
      thread: `${size}-${Math.random()}`,
    });
    await seed(store, conversation, size);
    await agent.runTurn(conversation, 'what do the three files say?');
    conversations.push(conversation);
  }
  return (n) => agent.runTurn(conversations[n % CONVERSATIONS]!, 'what do the three files say?');
}

/**
 * Tracing keeps the active span in AsyncLocalStorage, whose hooks slow every promise of the process
 * once it is in use: it is on for the traced side's turns only, so that the other sides run as
 * Spool does with tracing off.
 */
function tracingContext(on: boolean): void {
  context.disable();
  if (on) context.setGlobalContextManager(new AsyncLocalStorageContextManager());
}

/** A side's turns: wall time, and the CPU time this process spent on them (Spool's own work). */
interface Side {
  t: Timing;
  cpu: Timing;
}

/**
 * SAMPLES turns on each store, and traced on the database, in turn, so that all see the same
 * moments of the machine's load.
 */
async function measure(
  llm: { baseURL: string },
  store: StorePort,
  size: number,
  tracing: Tracing,
): Promise<{ t: Timing; floor: Timing; untraced: Side; traced: Side }> {
  tracingContext(true);
  const traced = await turnsOf(llm, store, size, tracing);
  tracingContext(false);
  const sides = [await turnsOf(llm, store, size), await turnsOf(llm, new MemoryStore(), size)];
  sides.push(traced);
  const wall: number[][] = [[], [], []];
  const cpu: number[][] = [[], [], []];
  for (let n = 0; n < SAMPLES; n++) {
    for (const [side, turn] of sides.entries()) {
      tracingContext(turn === traced);
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      await turn(n);
      wall[side]!.push(performance.now() - start);
      const used = process.cpuUsage(cpuStart);
      cpu[side]!.push((used.user + used.system) / 1000);
    }
  }
  tracingContext(false);
  const side = (i: number): Side => ({ t: timingOf(wall[i]!), cpu: timingOf(cpu[i]!) });
  return { t: timingOf(wall[0]!), floor: timingOf(wall[1]!), untraced: side(0), traced: side(2) };
}

async function withDatabases(run: (name: string, db: Database) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-bench-'));
  const embedded = await openDatabase({ dataDir: dir, logger: silentLogger });
  const scratch = await createScratchDatabase('spool_bench_overhead');
  const server = await openDatabase({
    databaseUrl: scratch.url,
    dataDir: '',
    logger: silentLogger,
  });
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
const sink = await startOtlpSink();
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.endpoint;
const tracing = await startTracing(
  { endpoint: sink.endpoint, captureContent: false },
  silentLogger,
);

const rows: Array<{
  db: string;
  size: number;
  t: Timing;
  floor: Timing;
  untraced: Side;
  traced: Side;
}> = [];
await withDatabases(async (name, db) => {
  for (const size of SIZES)
    rows.push({ db: name, size, ...(await measure(llm, new TranscriptStore(db), size, tracing)) });
});
llm.stop();
await tracing.shutdown();
const spans = await sink.spans();
sink.stop();

console.log(`\nOwn work per turn (3 tool calls, model answers at once), ${SAMPLES} turns each:\n`);
console.log(
  '| database | messages | median | p99 | p99 / 500 ms LLM call | in-memory floor median / p99 | p99 / floor p99 |',
);
console.log('|---|---|---|---|---|---|---|');
for (const { db, size, t, floor } of rows) {
  console.log(
    `| ${db} | ${size} | ${ms(t.median)} | ${ms(t.p99)} | ${((100 * t.p99) / LLM_CALL_MS).toFixed(1)}% | ${ms(floor.median)} / ${ms(floor.p99)} | ${(t.p99 / floor.p99).toFixed(1)}x |`,
  );
}

console.log(
  `\nTracing on (OTLP/HTTP to a receiver in its own process), the same turns side by side, ${SAMPLES} each; ${spans} spans received. CPU: this process's, user + system, per turn:\n`,
);
console.log(
  '| database | messages | CPU median off / on | CPU on / off | wall median off / on | wall on / off | wall p99 off / on |',
);
console.log('|---|---|---|---|---|---|---|');
for (const { db, size, untraced: off, traced: on } of rows) {
  console.log(
    `| ${db} | ${size} | ${ms(off.cpu.median)} / ${ms(on.cpu.median)} | ${(on.cpu.median / off.cpu.median).toFixed(2)}x | ${ms(off.t.median)} / ${ms(on.t.median)} | ${(on.t.median / off.t.median).toFixed(2)}x | ${ms(off.t.p99)} / ${ms(on.t.p99)} |`,
  );
}

const series = (db: string) =>
  SIZES.map((size) => Number(rows.find((r) => r.db === db && r.size === size)!.t.p99.toFixed(1)));
await renderChart(new URL('charts/overhead.png', import.meta.url).pathname, {
  title: { text: 'Own work per turn, p99 (ms)', left: 'center' },
  legend: { top: 30 },
  grid: { top: 70 },
  xAxis: { type: 'category', name: 'messages', data: SIZES.map(String) },
  yAxis: { type: 'value', name: 'ms' },
  series: [
    { name: 'embedded', type: 'bar', data: series('embedded') },
    { name: 'PostgreSQL', type: 'bar', data: series('PostgreSQL') },
    {
      name: 'in-memory floor',
      type: 'bar',
      data: SIZES.map((size) =>
        Number(rows.find((r) => r.db === 'embedded' && r.size === size)!.floor.p99.toFixed(1)),
      ),
    },
  ],
});
console.log('\nchart: bench/charts/overhead.png');
