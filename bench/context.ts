/**
 * Input tokens of a 36-turn session, and the facts answered, for three bots side by side: Spool;
 * naive (every result whole, never compacted); hard truncation (every result cut to 4,000 chars,
 * nothing more to read). Real agent, real store (a scratch database on the local PostgreSQL),
 * the official filesystem MCP server over stdio reading realistic files with planted facts. The
 * scripted model reads only what it has not yet seen: it answers from what its request shows,
 * else greps the result (get_continuation with a pattern), else searches history. Tokens are
 * counted with o200k (gpt-tokenizer) over each request's messages and tool schemas.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer';
import { Agent, type AgentOptions } from '../src/core/agent.ts';
import { OpenAiChatClient } from '../src/llm/openai-client.ts';
import { openDatabase } from '../src/store/database.ts';
import { HistorySearch } from '../src/store/history-search.ts';
import { ResultIndexer } from '../src/store/result-index.ts';
import { TranscriptStore } from '../src/store/transcript-store.ts';
import { parseMcpConfig } from '../src/tools/mcp/config.ts';
import { McpToolSource } from '../src/tools/mcp/source.ts';
import { builtinSource, ToolRegistry, type Tool, type ToolSource } from '../src/tools/registry.ts';
import { searchHistoryTool } from '../src/tools/search-history.ts';
import { defaultAgentOptions } from '../test/support/agent.ts';
import { FakeOpenAi, type ChatRequest, type ScriptedReply } from '../test/support/fake-openai.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { silentLogger } from '../test/support/logger.ts';
import { renderChart } from './lib/chart.ts';
import { workspaceFiles } from './lib/context-files.ts';

type Variant = 'Spool' | 'naive' | 'truncated at 4k';
const VARIANTS: Variant[] = ['Spool', 'naive', 'truncated at 4k'];
const { files, facts } = workspaceFiles();

/** The session: read everything, then ask for every fact, then for most of them again, with small talk between. */
const SESSION: string[] = [
  ...['transcript.txt', 'export.json', 'app.log', 'api.log', 'worker.log', 'change.diff'].map((f) => `read ${f}`),
  `read ${Object.keys(files).filter((f) => f.startsWith('src/')).join(' ')}`,
  'read export.csv',
  'read huge.log',
  ...facts.map((f) => `in ${f.file}, what is ${f.name}?`),
  'thanks, that helps',
  ...facts.slice(0, 8).flatMap((f, i) => [`in ${f.file}, what is ${f.name}?`, ...(i % 2 ? ['ok, thanks'] : [])]),
  'ok, thanks',
  'ok, thanks',
  'ok, thanks',
  'thanks, that is all',
];

/** The scripted model: what a careful model does with the tools it has. */
function model(root: string, canRead: boolean) {
  return (request: ChatRequest): ScriptedReply => {
    const last = request.messages.at(-1)!;
    const asked = [...request.messages].reverse().find((m) => m.role === 'user')!.content ?? '';
    const seen = request.messages.map((m) => m.content ?? '').join('\n');
    if (asked.startsWith('read ')) {
      if (last.role === 'tool') return { content: 'Read them.' };
      const paths = asked.slice(5).split(' ');
      return { toolCalls: paths.map((p, i) => ({ id: `r${i}`, name: 'fs__read_text_file', arguments: JSON.stringify({ path: join(root, p) }) })) };
    }
    const fact = facts.find((f) => asked.includes(f.name));
    if (!fact) return { content: 'You are welcome.' };
    const found = new RegExp(`FACT ${fact.name}: ([^\\n"\\\\]+)`).exec(seen);
    if (found) return { content: `${fact.name} is ${found[1]}` };
    const since = request.messages.map((m) => m.role).lastIndexOf('user');
    const tried = (name: string) => request.messages.slice(since).some((m) => m.tool_calls?.some((c) => c.function.name === name));
    // The call that read the file, from the assistant messages still in the request.
    const readCall = request.messages
      .flatMap((m) => m.tool_calls ?? [])
      .reverse()
      .find((c) => c.function.arguments.includes(`${fact.file}"`));
    if (canRead && readCall && !tried('get_continuation')) {
      return { toolCalls: [{ id: 'g', name: 'get_continuation', arguments: JSON.stringify({ tool_call_id: readCall.id, offset: 0, pattern: `FACT ${fact.name}:` }) }] };
    }
    if (canRead && !tried('search_history')) return { toolCalls: [{ id: 's', name: 'search_history', arguments: JSON.stringify({ query: `FACT ${fact.name}` }) }] };
    return { content: `I cannot see ${fact.name}.` };
  };
}

/** Tokens of one request: each message and the tool schemas, counted once per distinct text. */
const counted = new Map<string, number>();
const tokens = (text: string) => counted.get(text) ?? counted.set(text, encode(text).length).get(text)!;
const requestTokens = (r: ChatRequest) => r.messages.reduce((n, m) => n + tokens(JSON.stringify(m)), tokens(JSON.stringify(r.tools ?? [])));

/** Every result cut to its first 4,000 chars. */
function truncating(source: ToolSource): ToolSource {
  const cut = (tool: Tool): Tool => ({
    spec: tool.spec,
    run: async (args, context) => {
      const outcome = await tool.run(args, context);
      return { ...outcome, content: outcome.content.slice(0, 4_000) };
    },
  });
  return { tools: () => source.tools().map(cut), close: () => source.close() };
}

interface Outcome {
  variant: Variant;
  perTurn: number[];
  largest: number;
  answered: number;
  asked: number;
  hugeFactRequests: number;
}

async function run(variant: Variant, root: string, databaseUrl: string): Promise<Outcome> {
  const db = await openDatabase({ databaseUrl, dataDir: '', logger: silentLogger });
  const fake = await new FakeOpenAi().start();
  fake.fallback = model(root, variant === 'Spool');
  const config = parseMcpConfig(JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [join(process.cwd(), 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), root] } } }), join(root, 'mcp.json'), process.env, new Set());
  const fs = await McpToolSource.start(config, silentLogger, { maxMessageBytes: 10_485_760, binaryMaxBytes: 0 });
  const store = new TranscriptStore(db.prisma);
  const whole = { maxChars: 1e9, turnBudgetChars: 1e9, headChars: 4_000, tailChars: 1_000 };
  const options: AgentOptions =
    variant === 'Spool' ? defaultAgentOptions : { ...defaultAgentOptions, budget: whole, compaction: { ...defaultAgentOptions.compaction, minChars: 1e9 } };
  const sources = variant === 'Spool' ? [fs, builtinSource([searchHistoryTool(new HistorySearch(db.prisma, new ResultIndexer(db.prisma, silentLogger)))])] : [variant === 'naive' ? fs : truncating(fs)];
  const client = new OpenAiChatClient({ apiKey: 'sk-bench', baseURL: fake.baseURL, model: 'bench', maxTokens: 256, maxRetries: 0, timeoutMs: 60_000 });
  const agent = new Agent({ llm: client, tools: new ToolRegistry(sources), store, logger: silentLogger }, options);
  const conversation = await store.openConversation({ platform: 'bench', workspace: variant, channel: `c${process.pid}`, thread: 't' });
  const outcome: Outcome = { variant, perTurn: [], largest: 0, answered: 0, asked: 0, hugeFactRequests: 0 };
  try {
    for (const text of SESSION) {
      const { reply } = await agent.runTurn(conversation, text);
      if (fake.rejections.length) throw new Error(`${variant}: the strict fake rejected ${JSON.stringify(fake.rejections)}`);
      const sizes = fake.requests.map(requestTokens);
      outcome.perTurn.push(sizes.reduce((a, b) => a + b, 0));
      outcome.largest = Math.max(outcome.largest, ...sizes);
      const fact = facts.find((f) => text.includes(f.name));
      if (fact) {
        outcome.asked++;
        if (reply === `${fact.name} is ${fact.value}`) outcome.answered++;
        if (fact.file === 'huge.log') outcome.hugeFactRequests = Math.max(outcome.hugeFactRequests, fake.requests.length);
      }
      fake.requests.length = 0; // only this turn's requests are kept: naive's are megabytes each
    }
  } finally {
    await fs.close();
    await fake.stop();
    await db.close();
  }
  return outcome;
}

const root = await mkdtemp(join(tmpdir(), 'spool-bench-context-'));
const outcomes: Outcome[] = [];
try {
  await mkdir(join(root, 'src'));
  for (const [path, text] of Object.entries(files)) await writeFile(join(root, path), text);
  for (const variant of VARIANTS) {
    const scratch = await createScratchDatabase('spool_bench_context');
    try {
      outcomes.push(await run(variant, root, scratch.url));
    } finally {
      await scratch.drop();
    }
    console.error(`done: ${variant}`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const naive = outcomes.find((o) => o.variant === 'naive')!;
const total = (o: Outcome) => o.perTurn.reduce((a, b) => a + b, 0);
console.log(`\nA ${SESSION.length}-turn session, ${Object.keys(files).length} files (${(Object.values(files).reduce((n, t) => n + t.length, 0) / 1e6).toFixed(1)} M chars), ${naive.asked} questions on ${facts.length} planted facts:\n`);
console.log('| bot | input tokens | vs naive | largest request | largest / naive largest | facts answered | requests to the fact at the end of 2 MB |');
console.log('|---|---|---|---|---|---|---|');
for (const o of outcomes) {
  const vs = o === naive ? '—' : `${((100 * (total(naive) - total(o))) / total(naive)).toFixed(1)}% fewer`;
  console.log(`| ${o.variant} | ${total(o).toLocaleString('en')} | ${vs} | ${o.largest.toLocaleString('en')} | ${((100 * o.largest) / naive.largest).toFixed(1)}% | ${o.answered}/${o.asked} | ${o.hugeFactRequests} |`);
}

await renderChart(new URL('charts/context.png', import.meta.url).pathname, {
  title: { text: 'Input tokens per turn (log scale)', left: 'center' },
  legend: { top: 30 },
  grid: { top: 70 },
  xAxis: { type: 'category', name: 'turn', data: SESSION.map((_, i) => String(i + 1)) },
  yAxis: { type: 'log', name: 'tokens' },
  series: outcomes.map((o) => ({ name: o.variant, type: 'line', data: o.perTurn.map((n) => Math.max(1, n)) })),
});
console.log('\nchart: bench/charts/context.png');
