/**
 * The context benchmark: what each bot answers, and what it costs, for three scripted models that
 * never know where a fact is and answer only from what their request shows:
 * - a reader, which pages through whole documents and lists every fact it read (summarising);
 * - a grepper, which looks for one fact in a document, with a pattern where it can;
 * - a searcher, which asks about documents opened turns ago, through search_history where it can.
 * Spool (as the app wires it, bench/lib/spool-bot.ts, with the filesystem MCP server) runs beside three baselines
 * that could really run (bench/lib/baseline-bots.ts), all in a 128k-token window: a request over
 * it is refused and its turn fails. Cost is counted in raw input tokens (o200k) and in billed
 * tokens with prompt caching (bench/lib/billing.ts). A last run puts Spool in a 3,000-token window.
 * CONTEXT_TRACE=1 prints every request's cost and how much of the one before it it kept.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { McpToolSource } from '../src/tools/mcp/source.ts';
import { FakeOpenAi, type ChatRequest, type ScriptedReply } from '../test/support/fake-openai.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { DECISIONS, meetingTranscript } from '../test/support/meeting.ts';
import { FILESYSTEM_SERVER, runSpool } from '../test/support/process.ts';
import { grepperModel, readerModel, searcherModel } from '../test/support/readers.ts';
import { BaselineBot, type Baseline } from './lib/baseline-bots.ts';
import { addCosts, CACHED_RATE, requestCost, sharedMessages, type Cost } from './lib/billing.ts';
import { renderChart } from './lib/chart.ts';
import { workspaceFiles, type Fact } from './lib/context-files.ts';
import { filesystemSource, startSpoolBot } from './lib/spool-bot.ts';

const WINDOW = 128_000;
const MODEL = 'gpt-4o-mini'; // o200k, as OpenAI's current models count
type Bot = 'Spool' | Baseline;
const BOTS: Bot[] = ['Spool', 'naive', 'head+tail 16k', 'head + read'];

const { files, facts } = workspaceFiles();
files['meeting.txt'] = meetingTranscript();
// Larger than a turn's budget (200,000 chars): more than any bot can hold at once.
files['big.log'] =
  Array.from(
    { length: 5_000 },
    (_, i) =>
      `2026-11-02T10:${String(i % 60).padStart(2, '0')}:00Z INFO big batch=${i} rows=${(i * 7919) % 10_000} status=ok`,
  ).join('\n') + '\n';
const bigLines = files['big.log'].split('\n');
const bigFacts: Fact[] = [
  ['big-first', 'cursor 41-A', 0.2],
  ['big-middle', 'cursor 77-Q', 0.5],
  ['big-last', 'cursor 93-Z', 0.9],
].map(([name, value, depth]) => {
  bigLines.splice(Math.floor((depth as number) * bigLines.length), 0, `FACT ${name}: ${value}`);
  return { file: 'big.log', name: name as string, value: value as string };
});
files['big.log'] = bigLines.join('\n');
const factsOf = (file: string) =>
  file === 'meeting.txt'
    ? DECISIONS
    : [...facts, ...bigFacts]
        .filter((f) => f.file === file)
        .map((f) => `FACT ${f.name}: ${f.value}`);

interface Turn {
  text: string;
  /** What a right answer holds: every fact for the reader, one for the others. */
  expect: string[];
}

const SESSIONS: Record<'seed' | 'reader' | 'grepper' | 'searcher', Turn[]> = {
  // The seed case: Spool runs it as a real `spool chat` process, with TOOL_RESULT_MAX_CHARS=4000
  // and the window the fake holds every bot to.
  seed: [{ text: 'Read meeting.txt and list every fact in it.', expect: DECISIONS }],
  reader: [
    'meeting.txt',
    'transcript.txt',
    'app.log',
    'change.diff',
    'worker.log',
    'export.csv',
    'big.log',
  ].map((f) => ({ text: `Read ${f} and list every fact in it.`, expect: factsOf(f) })),
  grepper: [
    ...facts.filter((f) => f.file !== 'huge.log'),
    ...facts.filter((f) => f.file === 'huge.log'),
  ].map((f) => ({ text: `In ${f.file}, what is ${f.name}?`, expect: [f.value] })),
  searcher: [
    ...['transcript.txt', 'app.log', 'api.log', 'worker.log', 'change.diff', 'export.csv'].map(
      (f) => ({ text: `Open ${f}.`, expect: [] }),
    ),
    ...['thanks', 'ok', 'got it', 'nice'].map((text) => ({ text, expect: [] })),
    ...facts
      .filter((f) =>
        [
          'transcript.txt',
          'app.log',
          'api.log',
          'worker.log',
          'change.diff',
          'export.csv',
        ].includes(f.file),
      )
      .map((f) => ({
        text: `Earlier you opened ${f.file}: what was ${f.name}?`,
        expect: [f.value],
      })),
  ],
};

type Model = (request: ChatRequest) => ScriptedReply;

interface Outcome {
  bot: Bot;
  session: string;
  perTurn: Cost[];
  /** Per turn: whether it failed, its request over the window. */
  failed: boolean[];
  asked: number;
  right: number;
  /** Facts given, of those asked for. */
  found: number;
  expected: number;
  /** Questions answered short of right, saying what was missing, as opposed to answering wrong. */
  honest: number;
  failedTurns: number;
  requests: number;
  largest: number;
}

/** One session through one bot: the model scripted by `model`, the bot's turns by `turn`. */
async function session(
  bot: Bot,
  name: string,
  fake: FakeOpenAi,
  turn: (text: string) => Promise<string | undefined>,
): Promise<Outcome> {
  const outcome: Outcome = {
    bot,
    session: name,
    perTurn: [],
    failed: [],
    asked: 0,
    right: 0,
    found: 0,
    expected: 0,
    honest: 0,
    failedTurns: 0,
    requests: 0,
    largest: 0,
  };
  let previous: ChatRequest | undefined;
  for (const { text, expect } of SESSIONS[name as keyof typeof SESSIONS]) {
    const from = fake.requests.length;
    const reply = await turn(text);
    const costs: Cost[] = [];
    for (const request of fake.requests.slice(from)) {
      const cost = requestCost(request, previous);
      outcome.largest = Math.max(outcome.largest, cost.raw);
      // A request over the window is refused before it is read, and not billed.
      if (cost.raw + (request.max_tokens ?? 0) > WINDOW) continue;
      // CONTEXT_TRACE=1: where each request's cost comes from, and where its prefix broke.
      if (process.env.CONTEXT_TRACE)
        console.error(
          `${bot} ${name} turn ${outcome.perTurn.length + 1}: raw ${cost.raw}, cached ${cost.cached}, billed ${Math.round(cost.billed)}; prefix kept ${sharedMessages(request, previous)} of ${request.messages.length + 1} parts`,
        );
      costs.push(cost);
      previous = request;
    }
    outcome.requests += fake.requests.length - from;
    outcome.perTurn.push(addCosts(costs));
    outcome.failed.push(reply === undefined);
    if (reply === undefined) outcome.failedTurns++;
    if (expect.length === 0) continue;
    outcome.asked++;
    outcome.expected += expect.length;
    outcome.found += expect.filter((e) => reply?.includes(e)).length;
    if (reply !== undefined && expect.every((e) => reply.includes(e))) outcome.right++;
    else if (reply !== undefined && /could not hold|cannot see/.test(reply)) outcome.honest++;
  }
  fake.requests.length = 0;
  return outcome;
}

function modelFor(name: string, root: string): Model {
  const open = (path: string): NonNullable<ScriptedReply['toolCalls']>[number] => ({
    id: 'open',
    name: 'fs__read_text_file',
    arguments: JSON.stringify({ path: join(root, path) }),
  });
  if (name === 'reader' || name === 'seed')
    return readerModel(
      (q) => open(/^Read (\S+) /.exec(q)![1]!),
      /FACT [\w-]+: [^\n"\\]+|DECISION \d+: [^\n]*\./g,
    );
  return name === 'grepper' ? grepperModel(open) : searcherModel(open);
}

/**
 * Spool as the app wires it (`startSpoolBot`: its settings, built-in tools, page sizes and loop),
 * with the window and reply budget set as a user would set them.
 */
async function runAgent(
  name: string,
  root: string,
  fs: McpToolSource,
  contextTokens: number,
): Promise<Outcome> {
  const fake = await new FakeOpenAi().start();
  fake.contextTokens = contextTokens;
  fake.fallback = modelFor(name, root);
  try {
    const spool = await startSpoolBot(
      {
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MODEL: MODEL,
        OPENAI_CONTEXT_TOKENS: String(contextTokens),
        OPENAI_MAX_TOKENS: contextTokens < WINDOW ? '4096' : '256',
        OPENAI_MAX_RETRIES: '0',
      },
      [fs],
    );
    try {
      const outcome = await session('Spool', name, fake, (text) => spool.turn(text));
      if (fake.rejections.length)
        throw new Error(
          `Spool: the strict fake refused ${JSON.stringify(fake.rejections.slice(0, 3))}`,
        );
      return outcome;
    } finally {
      await spool.close();
    }
  } finally {
    await fake.stop();
  }
}

/**
 * The three ways a newcomer meets the window, none of them setting it: a model the table knows, a
 * model it does not (the default, 32,768), a server that reports its window (vLLM's max_model_len).
 */
const SEED_WAYS = {
  'model gpt-4.1 (known)': { model: 'gpt-4.1', reports: false },
  'unknown model (default window)': { model: 'acme-chat', reports: false },
  'server reports its window': { model: 'acme-chat', reports: true },
} as const;
type SeedWay = keyof typeof SEED_WAYS;

/**
 * The seed case through a real `spool chat` process and the filesystem server: what a user runs,
 * with no window setting.
 */
async function runSeedProcess(root: string, way: SeedWay): Promise<Outcome> {
  const { model, reports } = SEED_WAYS[way];
  const scratch = await createScratchDatabase('spool_bench_seed');
  const fake = await new FakeOpenAi().start();
  fake.contextTokens = WINDOW;
  fake.models = [...fake.models, model];
  if (reports) fake.listedWindow = WINDOW;
  fake.fallback = modelFor('seed', root);
  try {
    await writeFile(
      join(root, 'mcp.json'),
      JSON.stringify({
        mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, root] } },
      }),
    );
    const env = {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_MODEL: model,
      MCP_CONFIG: join(root, 'mcp.json'),
      DATABASE_URL: scratch.url,
      TOOL_RESULT_MAX_CHARS: '4000',
    };
    let windowLine = '';
    const outcome = await session('Spool', 'seed', fake, async (text) => {
      const run = await runSpool(['chat', '--session', 'seed'], { env, input: `${text}\n` });
      windowLine = /Model window: [^\n]*/.exec(run.stderr)?.[0] ?? 'no window line';
      return run.code === 0 ? run.stdout : undefined;
    });
    seedWindows.set(way, windowLine);
    if (fake.rejections.length)
      throw new Error(
        `Spool: the strict fake refused ${JSON.stringify(fake.rejections.slice(0, 3))}`,
      );
    return outcome;
  } finally {
    await fake.stop();
    await scratch.drop();
  }
}

/** The seed each way; the table's Spool row is the server that reports its window (128,000). */
async function seedEachWay(root: string): Promise<Outcome> {
  for (const way of Object.keys(SEED_WAYS) as SeedWay[])
    seedOutcomes.set(way, await runSeedProcess(root, way));
  return seedOutcomes.get('server reports its window')!;
}

async function runBaseline(
  bot: Baseline,
  name: string,
  root: string,
  fs: McpToolSource,
): Promise<Outcome> {
  const fake = await new FakeOpenAi().start();
  fake.contextTokens = WINDOW;
  fake.fallback = modelFor(name, root);
  try {
    const baseline = new BaselineBot(
      bot,
      new OpenAI({ apiKey: 'sk-bench', baseURL: fake.baseURL, maxRetries: 0 }),
      MODEL,
      fs.tools(),
    );
    return await session(bot, name, fake, (text) => baseline.turn(text));
  } finally {
    await fake.stop();
  }
}

const root = await mkdtemp(join(tmpdir(), 'spool-bench-context-'));
const outcomes: Outcome[] = [];
/** The seed read each way of SEED_WAYS, and the window line each run logged. */
const seedOutcomes = new Map<SeedWay, Outcome>();
const seedWindows = new Map<SeedWay, string>();
let small: Outcome[] = [];
try {
  await mkdir(join(root, 'src'));
  for (const [path, text] of Object.entries(files)) await writeFile(join(root, path), text);
  const server = (allowedTools?: string[]) => filesystemSource(root, allowedTools);
  const fs = await server();
  try {
    for (const name of Object.keys(SESSIONS)) {
      for (const bot of BOTS) {
        outcomes.push(
          bot !== 'Spool'
            ? await runBaseline(bot, name, root, fs)
            : name === 'seed'
              ? await seedEachWay(root)
              : await runAgent(name, root, fs, WINDOW),
        );
        console.error(`done: ${name} / ${bot}`);
      }
    }
  } finally {
    await fs.close();
  }
  // A small local model: 3,000 tokens, OPENAI_MAX_TOKENS=4096, one filesystem tool (its 14 take
  // 1,722 tokens).
  const oneTool = await server(['read_text_file']);
  try {
    small = [
      await runAgent('reader', root, oneTool, 3_000),
      await runAgent('grepper', root, oneTool, 3_000),
    ];
  } finally {
    await oneTool.close();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');
const total = (o: Outcome) => addCosts(o.perTurn);
console.log(
  `\nBilled tokens: the part of a request that repeats the start of the one before (from 1,024 tokens, in steps of 128) at ${CACHED_RATE} of the input price.\n`,
);
for (const name of Object.keys(SESSIONS)) {
  const rows = outcomes.filter((o) => o.session === name);
  const spool = total(rows[0]!);
  console.log(
    `### ${name}: ${SESSIONS[name as keyof typeof SESSIONS].length} turns, ${rows[0]!.asked} questions, ${rows[0]!.expected} facts asked for\n`,
  );
  console.log(
    '| bot | right | facts given | said what it could not see | failed turns (over the window) | requests | raw input tokens | billed tokens | Spool billed / this | the same, on the turns this bot completed |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const o of rows) {
    const t = total(o);
    // Like with like: a bot that failed a turn spent nothing on it, and answered nothing either.
    const completed = (c: Outcome) => addCosts(c.perTurn.filter((_, i) => !o.failed[i])).billed;
    const ratios =
      o === rows[0]
        ? '— | —'
        : `${(spool.billed / t.billed).toFixed(3)} | ${(completed(rows[0]!) / completed(o)).toFixed(3)}`;
    console.log(
      `| ${o.bot} | ${o.right}/${o.asked} | ${o.found}/${o.expected} | ${o.honest} | ${o.failedTurns} | ${o.requests} | ${fmt(t.raw)} | ${fmt(t.billed)} | ${ratios} |`,
    );
  }
  console.log('');
}
{
  const naive = outcomes.find((o) => o.session === 'seed' && o.bot === 'naive')!;
  console.log(
    '### the seed with no window setting (TOOL_RESULT_MAX_CHARS=4000, nothing else set), each way beside naive\n',
  );
  console.log(
    '| Spool, window from | logged at start | right | facts given | requests | billed tokens | / naive billed |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [way, o] of seedOutcomes)
    console.log(
      `| ${way} | ${seedWindows.get(way)} | ${o.right}/${o.asked} | ${o.found}/${o.expected} | ${o.requests} | ${fmt(total(o).billed)} | ${(total(o).billed / total(naive).billed).toFixed(3)} |`,
    );
  console.log(
    `| naive | — | ${naive.right}/${naive.asked} | ${naive.found}/${naive.expected} | ${naive.requests} | ${fmt(total(naive).billed)} | 1.000 |\n`,
  );
}
console.log('### Spool in a 3,000-token window (OPENAI_MAX_TOKENS=4096, one filesystem tool)\n');
console.log(
  '| model | right | said what it could not see | failed turns | requests | largest request (tokens) |',
);
console.log('|---|---|---|---|---|---|');
for (const o of small)
  console.log(
    `| ${o.session} | ${o.right}/${o.asked} | ${o.honest} | ${o.failedTurns} | ${o.requests} | ${fmt(o.largest)} |`,
  );

const labels = Object.entries(SESSIONS).flatMap(([name, turns]) =>
  turns.map((_, i) => (name === 'seed' ? 'seed' : `${name[0]}${i + 1}`)),
);
await renderChart(
  new URL('charts/context.png', import.meta.url).pathname,
  {
    title: {
      text: 'Billed input tokens per turn (log scale; a gap is a turn that failed)',
      subtext: 'the seed, then reader r, grepper g, searcher s',
      left: 'center',
    },
    legend: { top: 66 },
    grid: { top: 104, bottom: 40 },
    xAxis: { type: 'category', name: 'turn', data: labels },
    yAxis: { type: 'log', name: 'billed tokens' },
    series: BOTS.map((bot) => ({
      name: bot,
      type: 'line',
      data: outcomes
        .filter((o) => o.bot === bot)
        .flatMap((o) =>
          o.perTurn.map((c, i) => (o.failed[i] ? null : Math.max(1, Math.round(c.billed)))),
        ),
    })),
  },
  { width: 1000, height: 460 },
);
console.log('\nchart: bench/charts/context.png');
