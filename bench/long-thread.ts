/**
 * The long-thread benchmark: one thread of 100 turns (bench/lib/long-thread-script.ts) in which a
 * person has files, logs and JSON read whole and grepped, asks again about earlier results, and
 * makes small talk, answered by one scripted model that answers only from its request
 * (test/support/long-thread-model.ts). Spool (the real agent, store and filesystem MCP server,
 * settings at their defaults) runs it beside the context benchmark's three baselines
 * (bench/lib/baseline-bots.ts), all in a 128k-token window: a request over it is refused and its
 * turn fails. Cost is counted in raw input tokens (o200k) and in billed tokens with prompt caching
 * (bench/lib/billing.ts); request sizes are each request's raw input tokens.
 * LONG_THREAD_TRACE=1 prints every request's cost and how much of the one before it it kept;
 * LONG_THREAD_TURNS=N runs the first N turns only.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import { FakeOpenAi, type ChatRequest } from '../test/support/fake-openai.ts';
import { longThreadModel } from '../test/support/long-thread-model.ts';
import { BaselineBot, type Baseline } from './lib/baseline-bots.ts';
import { addCosts, CACHED_RATE, requestCost, sharedMessages, type Cost } from './lib/billing.ts';
import { renderChart } from './lib/chart.ts';
import { threadFiles, threadTurns, type TurnKind } from './lib/long-thread-script.ts';
import { filesystemSource, startSpoolBot } from './lib/spool-bot.ts';
import { percentile } from './lib/stats.ts';
import type { McpToolSource } from '../src/tools/mcp/source.ts';

const WINDOW = 128_000;
const MODEL = 'gpt-4o-mini'; // o200k, as OpenAI's current models count
type Bot = 'Spool' | Baseline;
const BOTS: Bot[] = ['Spool', 'naive', 'head+tail 16k', 'head + read', 'memoryless'];
const KINDS: TurnKind[] = ['read', 'grep', 'back-reference', 'small talk'];

const { files, facts } = threadFiles();
const THREAD = threadTurns(facts, files).slice(0, Number(process.env.LONG_THREAD_TURNS ?? 100));

interface TurnOutcome {
  failed: boolean;
  /** Facts given, of those the turn asked for. */
  found: number;
  /** Short of right, and saying what it could not see or hold, as opposed to answering wrong. */
  honest: boolean;
  cost: Cost;
  /** Raw input tokens of each request the turn sent, refused ones too. */
  sizes: number[];
  refused: number;
}

/** The thread through one bot, whose turns `turn` runs against `fake`. */
async function runThread(
  bot: Bot,
  fake: FakeOpenAi,
  turn: (text: string) => Promise<string | undefined>,
): Promise<{ turns: TurnOutcome[]; last?: ChatRequest }> {
  const outcomes: TurnOutcome[] = [];
  let previous: ChatRequest | undefined;
  for (const [i, { kind, text, expect }] of THREAD.entries()) {
    const reply = await turn(text);
    const costs: Cost[] = [];
    const sizes: number[] = [];
    for (const request of fake.requests) {
      const cost = requestCost(request, previous);
      sizes.push(cost.raw);
      // A request over the window is refused before it is read, and not billed.
      if (cost.raw + (request.max_tokens ?? 0) > WINDOW) continue;
      if (process.env.LONG_THREAD_TRACE)
        console.error(
          `${bot} turn ${i + 1} (${kind}): raw ${cost.raw}, cached ${cost.cached}, billed ${Math.round(cost.billed)}; prefix kept ${sharedMessages(request, previous)} of ${request.messages.length + 1} parts`,
        );
      costs.push(cost);
      previous = request;
    }
    fake.requests.length = 0;
    const found = expect.filter((e) => reply?.includes(e)).length;
    outcomes.push({
      failed: reply === undefined,
      found,
      honest:
        reply !== undefined && found < expect.length && /could not hold|cannot see/.test(reply),
      cost: addCosts(costs),
      sizes,
      refused: sizes.length - costs.length,
    });
  }
  return { turns: outcomes, last: previous };
}

async function runBot(
  bot: Bot,
  root: string,
  fs: McpToolSource,
): Promise<{ turns: TurnOutcome[]; last?: ChatRequest }> {
  const fake = await new FakeOpenAi().start();
  fake.contextTokens = WINDOW;
  fake.fallback = longThreadModel((path) => ({
    id: 'open',
    name: 'fs__read_text_file',
    arguments: JSON.stringify({ path: join(root, path) }),
  }));
  try {
    if (bot !== 'Spool') {
      const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.baseURL, maxRetries: 0 });
      const baseline = new BaselineBot(bot, client, MODEL, fs.tools());
      return await runThread(bot, fake, (text) => baseline.turn(text));
    }
    const spool = await startSpoolBot(
      {
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MODEL: MODEL,
        // No window setting: Spool knows gpt-4o-mini's (128k), as a newcomer's bot would.
        // As the baselines ask for: a reply budget reserved in the window on every request.
        OPENAI_MAX_TOKENS: '256',
        OPENAI_MAX_RETRIES: '0',
      },
      [fs],
    );
    try {
      return await runThread(bot, fake, (text) => spool.turn(text));
    } finally {
      await spool.close();
    }
  } finally {
    await fake.stop();
  }
}

/** What a request carries, part by part: [part, messages, tokens], as bench/lib/billing.ts counts. */
function requestParts(request: ChatRequest): Array<[string, number, number]> {
  const parts = new Map<string, [number, number]>();
  const add = (part: string, text: string) => {
    const [count, tokens] = parts.get(part) ?? [0, 0];
    parts.set(part, [count + 1, tokens + countTokens(text)]);
  };
  add('tool schemas', JSON.stringify(request.tools ?? []));
  for (const m of request.messages) {
    const part =
      m.role !== 'tool'
        ? m.role === 'assistant' && m.tool_calls?.length
          ? 'assistant, calling tools'
          : m.role
        : /^\[Old tool result cleared|left out here|^\[Tools run in earlier turns/.test(
              m.content ?? '',
            )
          ? 'tool results cleared or left out (a line saying how to read them again)'
          : 'tool results shown (whole, or cut to a head and tail)';
    add(part, JSON.stringify(m));
  }
  return [...parts].map(([part, [count, tokens]]) => [part, count, tokens]);
}

const root = await mkdtemp(join(tmpdir(), 'spool-bench-long-thread-'));
const outcomes = new Map<Bot, TurnOutcome[]>();
let spoolLast: ChatRequest | undefined;
try {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  const fs = await filesystemSource(root);
  try {
    for (const bot of BOTS) {
      const { turns, last } = await runBot(bot, root, fs);
      outcomes.set(bot, turns);
      if (bot === 'Spool') spoolLast = last;
      console.error(`done: ${bot}`);
    }
  } finally {
    await fs.close();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');
const naiveCompleted = outcomes.get('naive')!.map((t) => !t.failed);
const billedWhereNaiveCompleted = (turns: TurnOutcome[]) =>
  addCosts(turns.filter((_, i) => naiveCompleted[i]).map((t) => t.cost)).billed;
const spool = outcomes.get('Spool')!;

console.log(
  `\n${THREAD.length} turns: ${KINDS.map((k) => `${THREAD.filter((t) => t.kind === k).length} ${k}`).join(', ')}; ${THREAD.reduce((n, t) => n + t.expect.length, 0)} facts asked for. Naive completed ${naiveCompleted.filter(Boolean).length} turns. Billed tokens: the part of a request that repeats the start of the one before (from 1,024 tokens, in steps of 128) at ${CACHED_RATE} of the input price.\n`,
);
const factsOf = (turns: TurnOutcome[], kind?: TurnKind) => {
  const which = turns.filter((_, i) => !kind || THREAD[i]!.kind === kind);
  const asked = THREAD.filter((t) => !kind || t.kind === kind);
  return `${which.reduce((n, t) => n + t.found, 0)}/${asked.reduce((n, t) => n + t.expect.length, 0)}`;
};
console.log(
  '| bot | facts answered | in reads | in greps | in back-references | said what it could not see | failed turns | first failed turn | refused requests |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const [bot, turns] of outcomes)
  console.log(
    `| ${bot} | ${factsOf(turns)} | ${factsOf(turns, 'read')} | ${factsOf(turns, 'grep')} | ${factsOf(turns, 'back-reference')} | ${turns.filter((t) => t.honest).length} | ${turns.filter((t) => t.failed).length} | ${turns.findIndex((t) => t.failed) + 1 || '—'} | ${turns.reduce((n, t) => n + t.refused, 0)} |`,
  );
console.log(
  '\n| bot | requests | raw input tokens | cached share | billed tokens | Spool / this | billed, on the turns naive completed | Spool / this there | request p50 | request p90 | largest request |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const [bot, turns] of outcomes) {
  const total = addCosts(turns.map((t) => t.cost));
  const sizes = turns.flatMap((t) => t.sizes).sort((a, b) => a - b);
  const there = billedWhereNaiveCompleted(turns);
  const ratio = bot === 'Spool' ? '—' : (billedWhereNaiveCompleted(spool) / there).toFixed(3);
  const overall =
    bot === 'Spool' ? '—' : (addCosts(spool.map((t) => t.cost)).billed / total.billed).toFixed(3);
  console.log(
    `| ${bot} | ${sizes.length} | ${fmt(total.raw)} | ${(total.cached / total.raw).toFixed(3)} | ${fmt(total.billed)} | ${overall} | ${fmt(there)} | ${ratio} | ${fmt(percentile(sizes, 50))} | ${fmt(percentile(sizes, 90))} | ${fmt(sizes.at(-1)!)} |`,
  );
}
// The profile of the 1/10 goal: where Spool's and naive's billed tokens go, on the turns naive
// completed, by kind of turn; what is not cached is paid in full.
console.log(
  `\nOn the ${naiveCompleted.filter(Boolean).length} turns naive completed, by kind of turn:\n`,
);
console.log(
  '| kind | turns | Spool requests | Spool uncached tokens | Spool cached tokens | Spool billed | naive billed | Spool / naive |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const kind of KINDS) {
  const which = (turns: TurnOutcome[]) =>
    turns.filter((_, i) => naiveCompleted[i] && THREAD[i]!.kind === kind);
  const [own, naive] = [which(spool), which(outcomes.get('naive')!)];
  const cost = addCosts(own.map((t) => t.cost));
  const naiveBilled = addCosts(naive.map((t) => t.cost)).billed;
  console.log(
    `| ${kind} | ${own.length} | ${own.reduce((n, t) => n + t.sizes.length, 0)} | ${fmt(cost.raw - cost.cached)} | ${fmt(cost.cached)} | ${fmt(cost.billed)} | ${fmt(naiveBilled)} | ${(cost.billed / naiveBilled).toFixed(3)} |`,
  );
}
// Reading a document whole costs its tokens at least once, uncached, whichever bot reads it.
const readOnNaiveTurns = THREAD.filter((t, i) => naiveCompleted[i] && t.kind === 'read');
const documentTokens = readOnNaiveTurns.reduce((n, t) => n + countTokens(files[t.file!]!), 0);
console.log(
  `\nThe ${readOnNaiveTurns.length} documents read whole on those turns hold ${fmt(documentTokens)} tokens: ${(documentTokens / billedWhereNaiveCompleted(outcomes.get('naive')!)).toFixed(3)} of naive's billed tokens there, paid in full by any bot that reads them.`,
);
// Over the whole thread, the same floor: what the documents asked to be read whole hold.
const readTokens = THREAD.filter((t) => t.kind === 'read').reduce(
  (n, t) => n + countTokens(files[t.file!]!),
  0,
);
console.log(
  `Over all ${THREAD.length} turns, the documents read whole hold ${fmt(readTokens)} tokens: ${(readTokens / addCosts(outcomes.get('head+tail 16k')!.map((t) => t.cost)).billed).toFixed(3)} of head+tail 16k's billed tokens, which reads none of them whole.`,
);
// The profile of the p90 goal: what Spool's last request of the thread carries.
console.log(`\nSpool's last request (turn ${THREAD.length}), by part:\n`);
console.log('| part | messages | tokens |');
console.log('|---|---|---|');
for (const [part, count, tokens] of requestParts(spoolLast!))
  console.log(`| ${part} | ${count} | ${fmt(tokens)} |`);

await renderChart(
  new URL('charts/long-thread.png', import.meta.url).pathname,
  {
    title: {
      text: 'Largest request of each turn, in tokens (log scale)',
      subtext: 'a turn whose request is over the 128k window is refused: it fails',
      left: 'center',
    },
    legend: { top: 64, itemGap: 24 },
    grid: { top: 104, bottom: 40, right: 110 },
    xAxis: { type: 'category', name: 'turn', data: THREAD.map((_, i) => String(i + 1)) },
    yAxis: { type: 'log', name: 'tokens', min: 1_000 },
    series: BOTS.map((bot, n) => ({
      name: bot,
      type: 'line',
      showSymbol: false,
      data: outcomes.get(bot)!.map((t) => Math.max(...t.sizes)),
      ...(n === 0
        ? {
            markLine: {
              symbol: 'none',
              lineStyle: { type: 'dashed', color: '#888' },
              label: { formatter: '{b}' },
              data: [
                { name: '128k window', yAxis: WINDOW },
                { name: '16k (p90 goal)', yAxis: 16_000 },
              ],
            },
          }
        : {}),
    })),
  },
  { width: 1000, height: 460 },
);
console.log('\nchart: bench/charts/long-thread.png');
