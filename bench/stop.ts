/**
 * How soon a Stop ends a turn: from the Stop to the turn's end (its note delivered), while a slow
 * model is answering (MODEL_S seconds a request) and while a slow MCP tool runs (the official
 * everything server's long operation), taken on the replica running the turn and on another one
 * (which marks the row the running one polls), beside the same turn left to run (a TOOL_S-second
 * tool), measured side by side in one run over a scratch database on the PostgreSQL server at
 * SPOOL_BENCH_POSTGRES_URL (default: the local test server).
 *
 * RUNS (default 10) turns each.
 */
import { DeliveryEngine, STOPPED_REPLY } from '../src/core/delivery/engine/engine.ts';
import { deliverySettings } from '../src/core/delivery/settings.ts';
import type { InboundMessage } from '../src/core/ports/platform/delivery.ts';
import type { Outbound } from '../src/core/ports/platform/platform.ts';
import { EnvReader } from '../src/config.ts';
import { fileReader } from '../src/files/file-reader.ts';
import { ApprovalLedger } from '../src/store/delivery/approval-ledger.ts';
import { openDatabase } from '../src/store/database.ts';
import { DeliveryLedger } from '../src/store/delivery/delivery-ledger.ts';
import { HistorySearch } from '../src/store/transcripts/history-search.ts';
import { QuestionLedger } from '../src/store/delivery/question-ledger.ts';
import { ResultIndexer } from '../src/store/transcripts/result-index.ts';
import { TranscriptStore } from '../src/store/transcripts/transcript-store.ts';
import { parseMcpConfig } from '../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../src/tools/mcp/source.ts';
import { testAgent } from '../test/support/agent.ts';
import { FakeOpenAi } from '../test/support/fake-openai.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { silentLogger } from '../test/support/logger.ts';
import { EVERYTHING_SERVER, until } from '../test/support/process.ts';
import { ms, timingOf, type Timing } from './lib/stats.ts';

const RUNS = Number(process.env.RUNS ?? 10);
const MODEL_S = Number(process.env.MODEL_S ?? 20);
const TOOL_S = Number(process.env.TOOL_S ?? 3);
const SLOW = 'everything__trigger-long-running-operation';

const scratch = await createScratchDatabase('spool_bench_stop');
const db = await openDatabase({
  databaseUrl: scratch.url,
  dataDir: '',
  logger: silentLogger,
  poolSize: 8,
});
const llm = await new FakeOpenAi().start();
/** How long the slow tool runs this turn: the model asks for it, then answers from its result. */
let toolSeconds = 60;
llm.fallback = (request) =>
  request.messages.at(-1)!.role === 'user'
    ? {
        toolCalls: [
          { id: 'c', name: SLOW, arguments: JSON.stringify({ duration: toolSeconds, steps: 1 }) },
        ],
      }
    : { content: `done: ${String(request.messages.at(-1)!.content)}` };
const mcp = parseMcpConfig(
  JSON.stringify({
    mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } },
  }),
  'mcp.json',
  process.env,
  new Set(),
);
const source = await McpToolSource.start(mcp, silentLogger, {
  maxMessageBytes: 10_485_760,
  binaryMaxBytes: 1_000_000,
});

/** What the platform saw: each reply's time, and when each turn first said it runs a tool. */
const replies = new Map<string, { at: number; text: string }>();
const running = new Set<string>();
const outbound: Outbound = {
  render: (reply) => [reply],
  post: async (message, chunk) => {
    replies.set(message.messageKey, { at: performance.now(), text: chunk.text });
    return `m-${message.messageKey}`;
  },
  refuse: async () => {},
  showWorking: async () => async () => {},
  showStatus: async (message, status) => {
    if (status.startsWith('running')) running.add(message.messageKey);
  },
};

function replica(holder: string): DeliveryEngine {
  const store = new TranscriptStore(db);
  const agent = testAgent({ fake: llm, store, sources: [source] });
  const engine = new DeliveryEngine(
    {
      agent,
      ledger: new DeliveryLedger(db),
      search: new HistorySearch(db.prisma, new ResultIndexer(db, silentLogger)),
      files: fileReader({ binaryMaxBytes: 1_000 }),
      approvals: new ApprovalLedger(db.prisma),
      questions: new QuestionLedger(db.prisma),
      logger: silentLogger,
    },
    { ...deliverySettings(new EnvReader({})), holder },
  );
  engine.register('bench', outbound);
  return engine;
}

let sequence = 0;
const message = (): InboundMessage => {
  const key = `m${++sequence}`;
  return {
    lane: { platform: 'bench', workspace: 'W', channel: 'C', thread: key },
    messageKey: key,
    kind: 'message',
    user: 'U1',
    text: 'take your time',
    delivery: {},
  };
};

const runner = replica('runner');
const other = replica('other');
runner.start();

/**
 * One turn, stopped once `ready` holds, by `stopper`: milliseconds from the Stop to the note.
 * Without a stopper, the whole turn: milliseconds from the message to its answer.
 */
async function turn(
  ready: (m: InboundMessage, requestsBefore: number) => boolean,
  stopper?: DeliveryEngine,
): Promise<number> {
  const m = message();
  const requestsBefore = llm.requests.length;
  const sent = performance.now();
  await runner.handleIncoming(m);
  if (!stopper) {
    await until(() => replies.get(m.messageKey), 120_000);
    return replies.get(m.messageKey)!.at - sent;
  }
  await until(() => ready(m, requestsBefore) || undefined, 60_000);
  const stopped = performance.now();
  if ((await stopper.stopTurn({ lane: m.lane, user: 'U1' })) !== 'stopping')
    throw new Error('nothing to stop');
  const reply = await until(() => replies.get(m.messageKey), 60_000);
  if (reply.text !== STOPPED_REPLY) throw new Error(`a reply after the Stop: ${reply.text}`);
  return reply.at - stopped;
}

async function series(fn: () => Promise<number>): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await fn());
  return timingOf(samples);
}

try {
  toolSeconds = TOOL_S;
  const baseline = await series(() => turn(() => true));
  toolSeconds = 60;
  const inTool = await series(() => turn((m) => running.has(m.messageKey), runner));
  const inToolElsewhere = await series(() => turn((m) => running.has(m.messageKey), other));
  llm.latencyMs = MODEL_S * 1_000;
  // The model has the turn's request, and is slow to answer it.
  const inModel = await series(() =>
    turn((_, requestsBefore) => llm.requests.length > requestsBefore, runner),
  );
  llm.latencyMs = 0;

  console.log(
    `\nA Stop, from the click to the note delivered (${RUNS} turns each, PostgreSQL), beside the same turn left to run with a ${TOOL_S} s tool:`,
  );
  console.log('| Stop taken | median | p95 | p95 / turn left to run |');
  console.log('|---|---|---|---|');
  const row = (what: string, t: Timing) =>
    console.log(
      `| ${what} | ${ms(t.median)} | ${ms(t.p95)} | ${(t.p95 / baseline.median).toFixed(3)}x |`,
    );
  row('during the slow tool, on the replica running it', inTool);
  row('during the slow tool, on another replica', inToolElsewhere);
  row(`during a ${MODEL_S} s model request, on the replica running it`, inModel);
  console.log(
    `| (the turn left to run: message to answer) | ${ms(baseline.median)} | ${ms(baseline.p95)} | 1.000x |`,
  );
} finally {
  await runner.stop(0);
  await source.close();
  await llm.stop();
  await db.close();
  await scratch.drop();
}
