// A step whose results together are larger than the model's window, tried as a new user would: a
// real `spool chat` process with a model whose name Spool does not know (the default window) or
// OPENAI_CONTEXT_TOKENS, a model server that refuses what its window cannot hold, as a real one
// does, and an MCP server over stdio whose `lookup` returns about 2,000 chars a record.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { databaseKind } from '../../support/db.ts';
import {
  FakeOpenAi,
  lastUserText,
  type ChatRequest,
  type ScriptedReply,
} from '../../support/fake-openai.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { runSpool } from '../../support/process.ts';
import { readText, searcherModel, shownText } from '../../support/readers.ts';

const RECORDS = fileURLToPath(new URL('../../fixtures/lookup-mcp-server.mjs', import.meta.url));
/** A model no table of Spool's names: it takes the documented default window, 32,768 tokens. */
const UNKNOWN_MODEL = 'acme-local-7b';
const LOOKUP = 'records__lookup';

let fake: FakeOpenAi;
let root: string;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  fake.models = [UNKNOWN_MODEL];
  root = await mkdtemp(join(tmpdir(), 'spool-large-step-'));
});
afterAll(async () => {
  await fake.stop();
  await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.rejections.length = 0;
});

/** The key of record `i` of question `q`'s batch, and the value of its fact (as the server has it). */
const keyOf = (q: number, i: number) => `b${q}-r${i}`;
const valueOf = (key: string) => `${[...key].reverse().join('')}-ok`;
/** The record whose fact question `q` asks for: a different place in each batch. */
const askedOf = (q: number, calls: number) => ((q * 37) % calls) + 1;

const factIn = (text: string, key: string) => new RegExp(`FACT ${key}: ([\\w-]+)`).exec(text)?.[1];

const ASK = /^Question (\d+): look up records 1 to (\d+) of batch \d+, and tell me (b\d+-r\d+)\.$/;

/**
 * A model asked about an earlier batch: `searcherModel`, whose answer is the value's one word (a
 * search hit's excerpt is one line, which goes on past the value).
 */
function searchFor(request: ChatRequest): ScriptedReply {
  const reply = searcherModel(() => ({ id: 'x', name: LOOKUP, arguments: '{}' }))(request);
  return reply.content ? { content: reply.content.replace(/^(\S+ is \S+) .*$/, '$1') } : reply;
}

/**
 * The model: asked a question, it looks up every record of the batch in one step, then answers
 * with the fact asked for if its request shows it, else finds it with get_continuation's pattern
 * on the call that returned it, and answers from that. It says how many of its lookups have
 * results in the request. Asked about an earlier batch, it searches the history (`searcherModel`).
 */
function recordsModel(request: ChatRequest): ScriptedReply {
  const asked = ASK.exec(lastUserText(request));
  if (!asked) return searchFor(request);
  const [q, calls, key] = [Number(asked[1]), Number(asked[2]), asked[3]!];
  const last = request.messages.at(-1)!;
  if (last.role === 'user')
    return {
      toolCalls: Array.from({ length: calls }, (_, i) => ({
        id: `q${q}k${i + 1}`,
        name: LOOKUP,
        arguments: JSON.stringify({ key: keyOf(q, i + 1) }),
      })),
    };
  const turn = request.messages.slice(request.messages.map((m) => m.role).lastIndexOf('user'));
  const lookups = turn.flatMap((m) => m.tool_calls ?? []).filter((c) => c.function.name === LOOKUP);
  const answered = turn.filter(
    (m) => m.role === 'tool' && lookups.some((c) => c.id === m.tool_call_id),
  ).length;
  const value = factIn(shownText(request), key) ?? factIn(readText(request), key);
  if (value) return { content: `Question ${q}: ${key} is ${value}, from ${answered} results.` };
  const grepped = turn.some((m) =>
    m.tool_calls?.some((c) => c.function.name === 'get_continuation'),
  );
  const call = lookups.find((c) => c.function.arguments.includes(`"${key}"`));
  if (grepped || !call) return { content: `Question ${q}: I cannot see ${key}.` };
  return {
    toolCalls: [
      {
        id: `q${q}grep`,
        name: 'get_continuation',
        arguments: JSON.stringify({ tool_call_id: call.id, offset: 0, pattern: `FACT ${key}:` }),
      },
    ],
  };
}

/** Runs `turns` questions of `calls` lookups each, then asks about two earlier batches. */
async function thread(options: {
  calls: number;
  turns: number;
  shape: string;
  env: Record<string, string>;
}) {
  const { calls, turns } = options;
  const mcpConfig = join(root, 'mcp.json');
  const records = {
    command: process.execPath,
    args: [RECORDS],
    env: { RECORD_SHAPE: options.shape },
  };
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: { records } }));
  const questions = Array.from(
    { length: turns },
    (_, i) =>
      `Question ${i + 1}: look up records 1 to ${calls} of batch ${i + 1}, and tell me ${keyOf(i + 1, askedOf(i + 1, calls))}.`,
  );
  const later = [keyOf(2, calls - 3), keyOf(turns - 1, 5)];
  const backReferences = later.map((key) => `Earlier you looked up ${key}: what was ${key}?`);
  fake.fallback = recordsModel;
  // One database for the file's threads, each in a session of its own, on either database: the
  // embedded one is started from the file's DATA_DIR by each process, as a user's is.
  const database: Record<string, string> =
    databaseKind() === 'embedded'
      ? { DATA_DIR: join(root, 'data') }
      : { DATABASE_URL: fileDatabaseUrl() };
  const run = await runSpool(['chat', '--session', `large-step-${Date.now()}`], {
    env: {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_MODEL: UNKNOWN_MODEL,
      MCP_CONFIG: mcpConfig,
      ...database,
      ...options.env,
    },
    input: [...questions, ...backReferences, 'Thanks!'].join('\n') + '\n',
    timeoutMs: 240_000,
  });
  const expected = [
    ...questions.map((_, i) => {
      const key = keyOf(i + 1, askedOf(i + 1, calls));
      return `Question ${i + 1}: ${key} is ${valueOf(key)}, from ${calls} results.`;
    }),
    ...later.map((key) => `${key} is ${valueOf(key)}`),
    'You are welcome.',
  ];
  return { run, expected, later };
}

/** Requests by turn: a turn's first request is the one whose newest message is its question. */
function requestsByTurn(): ChatRequest[][] {
  const turns: ChatRequest[][] = [];
  for (const request of fake.requests)
    if (request.messages.at(-1)!.role === 'user') turns.push([request]);
    else turns.at(-1)!.push(request);
  return turns;
}

describe('a step whose results together are larger than the window', () => {
  it.each([
    { window: 32_768, calls: 90, shape: 'prose', env: {} as Record<string, string> },
    { window: 32_768, calls: 90, shape: 'json', env: {} },
    { window: 8_192, calls: 20, shape: 'prose', env: { OPENAI_CONTEXT_TOKENS: '8192' } },
    { window: 8_192, calls: 20, shape: 'json', env: { OPENAI_CONTEXT_TOKENS: '8192' } },
  ])(
    'at $window tokens, 12 turns of $calls $shape lookups in one step are all answered, every call paired, none sent past the window, every fact reached',
    async ({ window, calls, shape, env }) => {
      fake.contextTokens = window;
      const { run, expected } = await thread({ calls, turns: 12, shape, env });

      expect(run.stderr).toContain(`Model window: ${window.toLocaleString('en')} tokens`);
      // Every turn answered by the model, from a request holding a result for each of its calls;
      // under an answer whose turn read results as previews, the addresses of the first three.
      const lines = run.stdout.trim().split('\n');
      const links = lines.filter((line) => line.startsWith('View the whole result'));
      expect(lines.filter((line) => !links.includes(line))).toEqual(expected);
      expect(links.length).toBeGreaterThan(0);
      for (const link of links)
        expect(link).toMatch(
          /^View the whole result(?: [123] of \d+: records__lookup)?: http:\/\/127\.0\.0\.1:\d+\/web\/results\/call_[0-9a-f]{32}$/,
        );
      expect(run.code).toBe(0);
      // None refused: no request past the window, none with a call unpaired (the fake validates).
      expect(fake.rejections).toEqual([]);
      // Each fact reached within 3 requests of the one that first shows its result (or, for an
      // earlier batch, of the question).
      const turns = requestsByTurn();
      expect(turns).toHaveLength(expected.length);
      for (const requests of turns.slice(0, 12)) expect(requests.length).toBeLessThanOrEqual(4);
      for (const requests of turns.slice(12, 14)) expect(requests.length).toBeLessThanOrEqual(3);
    },
    // The time `thread` gives its process: 12 turns of 90 results took over 60 s on a loaded machine.
    240_000,
  );
});
