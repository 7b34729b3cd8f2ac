/**
 * What the tools' schemas cost: a small-talk turn's request (o200k over the tools and messages it
 * sends, as bench/lib/billing.ts counts), with 5, 14, 29, 62 and 200 tools connected, side by
 * side in one run, Spool's defaults beside the same bot with tool loading off
 * (TOOL_SCHEMAS_MAX_TOKENS out of reach) and with the catalogue kept however many tools there are
 * (TOOL_CATALOGUE_MAX_TOOLS out of reach, as Spool did before find_tools). The tools are the
 * official everything and filesystem MCP servers', some connected twice under other names, as a
 * team connects several servers; the 200 are the filesystem server's 14 beside 186 of the test
 * suite's realistic tools (test/support/many-tools.ts, in process). Each bot then reads a file:
 * past the threshold the model loads the filesystem tool first, or finds it, in words (one more
 * request).
 * Spool runs as bench/lib/spool-bot.ts has it: real agent, store, registry and MCP clients, a
 * scripted model server.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMcpConfig } from '../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../src/tools/mcp/source.ts';
import type { Tool } from '../src/core/ports/tools.ts';
import { builtinSource } from '../src/tools/registry.ts';
import { FakeOpenAi, type ChatRequest, type ScriptedReply } from '../test/support/fake-openai.ts';
import { MANY_TOOLS } from '../test/support/many-tools.ts';
import { silentLogger } from '../test/support/logger.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER } from '../test/support/process.ts';
import { requestCost } from './lib/billing.ts';
import { startSpoolBot } from './lib/spool-bot.ts';

const MODEL = 'gpt-4o-mini'; // o200k, as OpenAI's current models count
const SMALL_TALK = 'Thanks, that is all for now!';
const READ = 'What does notes.txt say?';
const NOTE = 'The release train leaves on Thursday.';
const READ_TOOL = 'fs__read_text_file';
const FIVE = [
  'read_text_file',
  'list_directory',
  'search_files',
  'get_file_info',
  'directory_tree',
];

type Servers = Record<string, { command: string; args: string[]; allowedTools?: string[] }>;
const fs = (root: string, allowedTools?: string[]) => ({
  command: process.execPath,
  args: [FILESYSTEM_SERVER, root],
  ...(allowedTools ? { allowedTools } : {}),
});
const everything = () => ({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] });

/**
 * Each setup: how many tools, and the servers that make them (everything: 14 and the
 * read_resource Spool adds for a server that serves resources, filesystem: 14).
 */
const setups = (
  root: string,
): Array<{ tools: number; servers: Servers; what: string; fixtures?: number }> => [
  { tools: 5, what: 'filesystem, 5 of its tools', servers: { fs: fs(root, FIVE) } },
  { tools: 14, what: 'filesystem', servers: { fs: fs(root) } },
  {
    tools: 29,
    what: 'everything + filesystem',
    servers: { everything: everything(), fs: fs(root) },
  },
  {
    tools: 62,
    what: 'everything ×2 + filesystem ×2 + 4 more',
    servers: {
      everything: everything(),
      fs: fs(root),
      staging: everything(),
      docs: fs(root),
      logs: fs(root, FIVE.slice(0, 4)),
    },
  },
  {
    tools: 200,
    what: 'filesystem + 186 realistic tools of 19 services',
    servers: { fs: fs(root) },
    fixtures: 186,
  },
];

/** `count` of the test suite's realistic tools, each answering that it is done. */
const fixtureSource = (count: number) =>
  builtinSource(
    MANY_TOOLS.slice(0, count).map((spec): Tool => ({
      spec,
      run: async () => ({ content: 'Done.', isError: false }),
    })),
  );

/**
 * Small talk is answered; a question loads the read tool if its schema is not sent, reads the
 * file, and answers from it.
 */
function model(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  const tools = (request.tools ?? []).map((t) => t.function.name);
  if (last.role === 'user' && last.content === SMALL_TALK) return { content: 'Any time!' };
  if (last.role === 'tool' && last.content?.includes(NOTE)) return { content: `It says: ${NOTE}` };
  const call = (name: string, args: unknown) => ({
    toolCalls: [{ id: 'call_0', name, arguments: JSON.stringify(args) }],
  });
  if (tools.includes(READ_TOOL)) return call(READ_TOOL, { path: 'notes.txt' });
  // A model asks for the tool in words where it has no catalogue to read the name from.
  if (tools.includes('find_tools')) return call('find_tools', { query: 'read a text file' });
  return call('load_tools', { names: [READ_TOOL] });
}

async function source(
  root: string,
  { servers, tools, fixtures }: ReturnType<typeof setups>[number],
): Promise<McpToolSource> {
  const config = parseMcpConfig(
    JSON.stringify({ mcpServers: servers }),
    join(root, 'mcp.json'),
    process.env,
    new Set(),
  );
  const mcp = await McpToolSource.start(config, silentLogger, {
    maxMessageBytes: 10_485_760,
    binaryMaxBytes: 0,
  });
  const listed = mcp.tools().length + (fixtures ?? 0);
  if (listed !== tools) throw new Error(`expected ${tools} tools, the servers list ${listed}`);
  return mcp;
}

interface Run {
  /** Tools the small-talk request carried. */
  sent: number;
  smallTalk: number;
  read: { requests: number; tokens: number; answered: boolean };
}

async function run(
  fake: FakeOpenAi,
  root: string,
  setup: ReturnType<typeof setups>[number],
  env: Record<string, string>,
): Promise<Run> {
  const mcp = await source(root, setup);
  const bot = await startSpoolBot(
    {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_MODEL: MODEL,
      OPENAI_CONTEXT_TOKENS: '128000',
      OPENAI_MAX_TOKENS: '256',
      OPENAI_MAX_RETRIES: '0',
      ...env,
    },
    [mcp, fixtureSource(setup.fixtures ?? 0)],
  );
  try {
    const before = fake.requests.length;
    await bot.turn(SMALL_TALK);
    const smallTalk = fake.requests[before]!;
    const read = fake.requests.length;
    const reply = await bot.turn(READ);
    const reads = fake.requests.slice(read);
    return {
      sent: smallTalk.tools?.length ?? 0,
      smallTalk: requestCost(smallTalk).raw,
      read: {
        requests: reads.length,
        tokens: reads.reduce((n, r) => n + requestCost(r).raw, 0),
        answered: reply?.includes(NOTE) ?? false,
      },
    };
  } finally {
    await bot.close();
    await mcp.close();
  }
}

const root = await mkdtemp(join(tmpdir(), 'spool-bench-tools-'));
await writeFile(join(root, 'notes.txt'), `${NOTE}\n`);
const fake = await new FakeOpenAi().start();
fake.fallback = model;
fake.models = [MODEL];
try {
  const rows: Array<{ setup: ReturnType<typeof setups>[number]; on: Run; off: Run; all: Run }> = [];
  for (const setup of setups(root)) {
    const on = await run(fake, root, setup, {});
    const off = await run(fake, root, setup, { TOOL_SCHEMAS_MAX_TOKENS: '1000000000' });
    const all = await run(fake, root, setup, { TOOL_CATALOGUE_MAX_TOOLS: '1000000000' });
    rows.push({ setup, on, off, all });
  }
  const base = rows[0]!.on.smallTalk;
  const ratio = (n: number) => `${(n / base).toFixed(2)}×`;
  console.log(`### A small-talk turn's request by tools connected (o200k, ${MODEL})\n`);
  console.log(
    '| tools connected | servers | schemas sent, defaults | small-talk request, defaults | × 5 tools | catalogue of every tool | × 5 tools | loading off | × 5 tools | reading a file, defaults: requests, input tokens | catalogue of every tool | loading off |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { setup, on, off, all } of rows) {
    const read = (r: Run) =>
      `${r.read.requests}, ${r.read.tokens.toLocaleString('en')}${r.read.answered ? '' : ' (not answered)'}`;
    console.log(
      `| ${setup.tools} | ${setup.what} | ${on.sent} | ${on.smallTalk.toLocaleString('en')} | ${ratio(on.smallTalk)} | ${all.smallTalk.toLocaleString('en')} | ${ratio(all.smallTalk)} | ${off.smallTalk.toLocaleString('en')} | ${ratio(off.smallTalk)} | ${read(on)} | ${read(all)} | ${read(off)} |`,
    );
  }
  console.log(
    `\nGoals (issues 40 and 56): with 62 tools, and with 200, the small-talk request ≤ 1.3× its size with 5. "Schemas sent" counts the built-ins (search_history, get_continuation) and, past TOOL_SCHEMAS_MAX_TOKENS, load_tools with its catalogue or, past TOOL_CATALOGUE_MAX_TOOLS server tools, find_tools. "Catalogue of every tool" is load_tools whatever the number, as before find_tools.`,
  );
} finally {
  await fake.stop();
  await rm(root, { recursive: true, force: true });
}
