import type { ChildProcess } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext, ToolProgress } from '../../../src/core/ports/tools.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { lastMessage, markedCallId, nextOffset, sentCallIds } from '../../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { freePort, serverPidsBelow, startHttpEverything, until } from '../../support/process.ts';
import { RecordingLogger, silentLogger } from '../../support/logger.ts';
import { Agent } from '../../../src/core/agent/agent.ts';
import { defaultAgentOptions, openAiClientFor, toolsWithPages } from '../../support/agent.ts';
import { endingRegistry } from '../../support/ended-calls.ts';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const TICKETS = join(import.meta.dirname, '../../fixtures/ticket-mcp-server.mjs');
const SECRETS = new Set(['OPENAI_API_KEY', 'SLACK_BOT_TOKEN', 'DISCORD_TOKEN', 'DATABASE_URL']);

const context = (): ToolContext => ({
  conversation: {
    id: '00000000-0000-0000-0000-000000000000',
    platform: 't',
    workspace: 'w',
    channel: 'c',
    thread: 't',
  },
  turn: 1,
  signal: new AbortController().signal,
  reading: { transcript: [], viewChars: 200_000 },
});

async function startSource(
  servers: Record<string, unknown>,
  logger = silentLogger,
): Promise<McpToolSource> {
  const config = parseMcpConfig(
    JSON.stringify({ mcpServers: servers }),
    join(tmpdir(), 'mcp.json'),
    process.env,
    SECRETS,
  );
  expect(config.problems).toEqual([]);
  return McpToolSource.start(config, logger, {
    maxMessageBytes: 10_485_760,
    binaryMaxBytes: 1_000_000,
  });
}

/** Server processes running `script` below this test process. */
const childPids = (script: string) => serverPidsBelow(process.pid, script);

describe('server-filesystem over stdio, in a full turn', () => {
  let root: string;
  let db: Database;
  let store: TranscriptStore;
  let fake: FakeOpenAi;
  let source: McpToolSource;
  const big =
    Array.from(
      { length: 600 },
      (_, i) => `entry ${String(i).padStart(3, '0')}: ${'.'.repeat(38)}`,
    ).join('\n') + '\nCONCLUSION: ship on Friday\n';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'spool-fs-'));
    await mkdir(join(root, 'docs'));
    await writeFile(join(root, 'docs', 'plan.txt'), big);
    await writeFile(join(root, 'docs', 'notes.md'), '# notes');
    db = await testDatabase();
    store = testStore(db);
    fake = await new FakeOpenAi().start();
    source = await startSource({ fs: { command: process.execPath, args: [FILESYSTEM, root] } });
  });
  afterAll(async () => {
    await source.close();
    await fake.stop();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('lists a directory, reads a 30,000-char file through preview and get_continuation, and answers', async () => {
    expect(big.length).toBeGreaterThan(30_000);
    const names = source.tools().map((t) => t.spec.name);
    expect(names).toContain('fs__list_directory');
    expect(names).toContain('fs__read_text_file');
    let step = 0;
    fake.fallback = (request) => {
      const last = lastMessage(request);
      step++;
      if (step === 1)
        return {
          toolCalls: [
            {
              id: 'ls',
              name: 'fs__list_directory',
              arguments: JSON.stringify({ path: join(root, 'docs') }),
            },
          ],
        };
      if (step === 2)
        return {
          toolCalls: [
            {
              id: 'read',
              name: 'fs__read_text_file',
              arguments: JSON.stringify({ path: join(root, 'docs', 'plan.txt') }),
            },
          ],
        };
      const offset = nextOffset(last.content ?? '');
      if (offset !== undefined)
        return {
          toolCalls: [
            {
              id: `page${step}`,
              name: 'get_continuation',
              arguments: JSON.stringify({ tool_call_id: markedCallId(last.content ?? ''), offset }),
            },
          ],
        };
      const listing = request.messages.find((m) => m.role === 'tool')!.content!;
      // The conclusion, wherever the request shows it: the file's end is the preview's tail, in
      // view above the last page.
      return {
        content: `Listed: ${listing.replace(/\n/g, ', ')}. ${/CONCLUSION: [^\n]+/.exec(request.messages.map((m) => m.content ?? '').join('\n'))?.[0]}`,
      };
    };
    const agent = new Agent(
      {
        llm: openAiClientFor(fake),
        // Pages of a stated size: with the window known, the rest would come in one page.
        tools: toolsWithPages(store, [source], { chunkChars: 10_000, maxChunkChars: 10_000 }),
        store,
        logger: silentLogger,
      },
      { ...defaultAgentOptions, budget: { ...defaultAgentOptions.budget, maxChars: 10_000 } },
    );
    const { reply } = await agent.runTurn(
      await store.openConversation(uniqueKey()),
      'what does the plan conclude?',
    );
    expect(reply).toBe('Listed: [FILE] notes.md, [FILE] plan.txt. CONCLUSION: ship on Friday');
    expect(fake.rejections).toEqual([]);
    expect(
      fake.requests.filter((r) =>
        lastMessage(r).content?.includes('Read on with get_continuation('),
      ).length,
    ).toBeGreaterThanOrEqual(3);
  });

  it('returns a path outside the allowed root as an error result', async () => {
    const outcome = await endingRegistry([source]).call(
      'fs__read_text_file',
      { path: '/etc/passwd' },
      context(),
    );
    expect(outcome.isError).toBe(true);
    expect(JSON.parse(outcome.content).error).toMatch(/Access denied|outside allowed/i);
    expect(outcome.content).not.toContain('root:x:0');
  });

  it('stores and shows a binary file (NUL bytes, invalid UTF-8) and a model reply with a lone surrogate, and the conversation goes on', async () => {
    fake.requests.length = 0;
    await writeFile(
      join(root, 'docs', 'blob.bin'),
      Buffer.concat([
        Buffer.from('header\u0000\u0000'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('tail FACT 7'),
      ]),
    );
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user' && last.content === 'read the blob')
        return {
          toolCalls: [
            {
              id: 'b',
              name: 'fs__read_text_file',
              arguments: JSON.stringify({ path: join(root, 'docs', 'blob.bin') }),
            },
          ],
        };
      // A reply with a lone surrogate, as a model that cut an emoji in half would send.
      if (last.role === 'tool')
        return { content: `It ends with ${/FACT \d/.exec(last.content ?? '')![0]} \ud83d` };
      return { content: `still here: ${last.content}` };
    };
    const agent = new Agent(
      {
        llm: openAiClientFor(fake),
        tools: toolsWithPages(store, [source]),
        store,
        logger: silentLogger,
      },
      defaultAgentOptions,
    );
    const conversation = await store.openConversation(uniqueKey());
    const { reply, status } = await agent.runTurn(conversation, 'read the blob');
    expect(status).toBe('ok');
    expect(reply).toContain('It ends with FACT 7');
    // The next turn sends that history back: the strict fake takes it.
    expect((await agent.runTurn(conversation, 'and now?')).reply).toBe('still here: and now?');
    expect(fake.rejections).toEqual([]);
    const stored = await store.readToolResult(
      conversation,
      sentCallIds(fake.requests.find((r) => lastMessage(r).role === 'tool')!)[0]!,
    );
    expect(stored).toContain('header\ufffd\ufffd');
    expect(stored).toContain('tail FACT 7');
    expect(stored).toContain(
      '[This result held NUL bytes, so it looks binary: each was replaced by U+FFFD.]',
    );
    expect(stored).not.toContain('\u0000');
  });
});

describe('server-everything over stdio', () => {
  let source: McpToolSource;
  const registry = () => endingRegistry([source]);

  beforeAll(async () => {
    process.env.OPENAI_API_KEY = 'sk-bot-secret-that-must-not-leak';
    process.env.SLACK_BOT_TOKEN = 'xoxb-bot-secret-that-must-not-leak';
    source = await startSource({
      everything: {
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        env: { GREETING: 'configured value' },
        timeoutMs: 1_500,
        maxTimeoutMs: 4_000,
      },
    });
  });
  afterAll(async () => {
    await source.close();
    delete process.env.OPENAI_API_KEY;
    delete process.env.SLACK_BOT_TOKEN;
  });

  it('passes structured content as JSON text', async () => {
    const outcome = await registry().call(
      'everything__get-structured-content',
      { location: 'New York' },
      context(),
    );
    expect(outcome.isError).toBe(false);
    expect(JSON.parse(outcome.content)).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });

  it('describes an image instead of dumping base64 into the context', async () => {
    const outcome = await registry().call('everything__get-tiny-image', {}, context());
    expect(outcome.content).toMatch(/\[image: image\/png, \d+ bytes, stored, not shown\]/);
    expect(outcome.content.length).toBeLessThan(1_000);
    expect(outcome.content).not.toMatch(/[A-Za-z0-9+/]{200,}/);
  });

  it("sends a tool's image to a model that takes images (OPENAI_IMAGE_INPUT), in the turn", async () => {
    const db = await testDatabase();
    const fake = await new FakeOpenAi().start();
    try {
      fake.imageInput = true;
      fake.fallback = (request) =>
        lastMessage(request).role === 'user' &&
        fake.images.length === 0 &&
        request.messages.length === 2
          ? { toolCalls: [{ id: 'shot', name: 'everything__get-tiny-image', arguments: '{}' }] }
          : { content: `saw ${fake.images.length} image(s)` };
      const agent = new Agent(
        {
          llm: openAiClientFor(fake, 0, { imageInput: true }),
          tools: registry(),
          store: testStore(db),
          logger: silentLogger,
        },
        defaultAgentOptions,
      );
      const result = await agent.runTurn(
        await testStore(db).openConversation(uniqueKey()),
        'show me',
      );
      expect(fake.rejections).toEqual([]);
      expect(result.reply).toBe('saw 1 image(s)');
      expect(fake.images).toEqual([
        expect.stringMatching(/^data:image\/png;base64,[A-Za-z0-9+/]{100,}={0,2}$/),
      ]);
    } finally {
      await fake.stop();
      await db.close();
    }
  });

  it("leaves no abort listener on the turn's signal per call", async () => {
    const turn = context();
    for (let i = 0; i < 12; i++)
      expect((await registry().call('everything__echo', { message: `m${i}` }, turn)).isError).toBe(
        false,
      );
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('cancels a call that outlives its timeout and reports it as an error result', async () => {
    const started = Date.now();
    const outcome = await registry().call(
      'everything__trigger-long-running-operation',
      { duration: 20, steps: 2 },
      context(),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome.isError).toBe(true);
    expect(JSON.parse(outcome.content).error).toBe(
      'trigger-long-running-operation on MCP server "everything" did not finish within 1.5 s of its last word (or 4 s in all) and was cancelled.',
    );
    // The server is still there for the next call.
    expect(
      (await registry().call('everything__echo', { message: 'still here' }, context())).content,
    ).toContain('still here');
  });

  it('sends a progressToken: each progress notification restarts the timeout, and the call finishes', async () => {
    const progress: ToolProgress[] = [];
    const outcome = await registry().call(
      'everything__trigger-long-running-operation',
      { duration: 3, steps: 6 },
      { ...context(), onProgress: (p) => progress.push(p) },
    );
    // 3 s in all, past the 1.5 s timeout: each step's notification kept it alive.
    expect(outcome).toMatchObject({ isError: false, content: expect.stringContaining('Steps: 6') });
    // Each step's notification, in order; the last can reach the SDK after the result has.
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(progress).toEqual(
      [1, 2, 3, 4, 5, 6].slice(0, progress.length).map((step) => ({ progress: step, total: 6 })),
    );
  });

  it('cancels a call that keeps reporting progress past maxTimeoutMs', async () => {
    const started = Date.now();
    const outcome = await registry().call(
      'everything__trigger-long-running-operation',
      { duration: 16, steps: 32 },
      context(),
    );
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(JSON.parse(outcome.content).error).toContain('(or 4 s in all) and was cancelled');
  });

  it('reads a resource_link a tool returned, and a blob one, through everything__read_resource', async () => {
    const links = await registry().call('everything__get-resource-links', { count: 2 }, context());
    const [blobUri, textUri] = [...links.content.matchAll(/\[resource link (\S+)/g)].map(
      (m) => m[1]!,
    );
    expect([blobUri, textUri]).toEqual([
      'demo://resource/dynamic/blob/1',
      'demo://resource/dynamic/text/2',
    ]);
    const reader = registry()
      .list()
      .find((t) => t.name === 'everything__read_resource')!;
    expect(reader.description).toMatch(/It lists: demo:\/\//);
    const text = await registry().call('everything__read_resource', { uri: textUri }, context());
    expect(text).toMatchObject({
      isError: false,
      content: expect.stringMatching(/^\[resource demo:\/\/resource\/dynamic\/text\/2\]\n\S/),
    });
    const blob = await registry().call('everything__read_resource', { uri: blobUri }, context());
    expect(blob.content).toMatch(
      /^\[resource demo:\/\/resource\/dynamic\/blob\/1: .+ bytes, stored, not shown\]$/,
    );
    const missing = await registry().call(
      'everything__read_resource',
      { uri: 'demo://nothing/here' },
      context(),
    );
    expect(missing.isError).toBe(true);
  });

  it('does not offer a tool that runs only as a task', async () => {
    const names = registry()
      .list()
      .map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).not.toContain('everything__simulate-research-query');
  });

  it("keeps the bot's tokens out of a server's environment, and gives it Node's compile cache", async () => {
    const outcome = await registry().call('everything__get-env', {}, context());
    const env = JSON.parse(outcome.content) as Record<string, string>;
    expect(env.GREETING).toBe('configured value');
    expect(env.PATH).toBeTruthy();
    // The directory this process keeps its compiled code in (vitest.config.ts sets it).
    expect(module.getCompileCacheDir()).toBeTruthy();
    expect(env.NODE_COMPILE_CACHE).toBe(module.getCompileCacheDir());
    expect(outcome.content).not.toContain('must-not-leak');
    expect(Object.keys(env).filter((k) => /OPENAI|SLACK|DISCORD|DATABASE/.test(k))).toEqual([]);
  });
});

describe('a server that dies', () => {
  it('answers calls during the outage with an error, then comes back; shutdown ends the process', async () => {
    const logger = new RecordingLogger();
    const source = await startSource(
      { mem: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      logger,
    );
    const registry = endingRegistry([source]);
    try {
      const [pid] = childPids(EVERYTHING);
      expect(pid).toBeGreaterThan(0);
      process.kill(pid!, 'SIGKILL');
      const during = await until(async () => {
        const outcome = await registry.call('mem__echo', { message: 'hello?' }, context());
        return outcome.isError ? outcome : undefined;
      });
      expect(JSON.parse(during.content).error).toMatch(
        /MCP server "mem" is unavailable right now|failed: .*[Cc]onnection closed/,
      );
      const after = await until(async () => {
        const outcome = await registry.call('mem__echo', { message: 'back' }, context());
        return outcome.isError ? undefined : outcome;
      });
      expect(after.content).toContain('back');
      expect(logger.messages()).toContain('MCP server "mem" stopped; retrying in 1 s');
      expect(childPids(EVERYTHING)).toHaveLength(1);
    } finally {
      await source.close();
    }
    await until(() => (childPids(EVERYTHING).length === 0 ? true : undefined), 5_000);
  });
});

describe('what a server says of calling its tools again', () => {
  it('reads readOnlyHint and idempotentHint into the flags, marks idempotent what mcp.json names, and says when the turn cut a call short', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spool-tickets-'));
    const server = (env: Record<string, string>, more: Record<string, unknown> = {}) => ({
      command: process.execPath,
      args: [TICKETS],
      env: { CALLS_FILE: join(dir, 'calls'), TICKET_DELAY_MS: '60000', ...env },
      ...more,
    });
    const source = await startSource({
      plain: server({}),
      marked: server({}, { idempotentTools: ['create_ticket'] }),
    });
    try {
      const registry = endingRegistry([source]);
      expect(Object.fromEntries(registry.list().map((t) => [t.name, t.flags]))).toEqual({
        marked__create_ticket: { idempotent: true },
        marked__lookup_ticket: { readOnly: true },
        plain__create_ticket: {},
        plain__lookup_ticket: { readOnly: true },
      });
      const stop = new AbortController();
      const call = registry.call(
        'plain__create_ticket',
        { title: 'x' },
        {
          ...context(),
          signal: stop.signal,
        },
      );
      await until(() => (existsSync(join(dir, 'calls')) ? true : undefined));
      stop.abort(new Error('shutting down'));
      expect(await call).toEqual({
        content: JSON.stringify({
          error: 'create_ticket on MCP server "plain" was stopped before it finished.',
        }),
        isError: true,
        cutShort: true,
      });
    } finally {
      await source.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('SSE servers', () => {
  let server: ChildProcess;
  let port: number;
  beforeAll(async () => ({ server, port } = await startHttpEverything('sse')));
  afterAll(() => void server.kill());

  it.each([
    ['when the config says "type": "sse"', { type: 'sse' }],
    ['by falling back when Streamable HTTP is refused', {}],
  ])('calls tools %s', async (_, extra) => {
    const source = await startSource({ legacy: { url: `http://127.0.0.1:${port}/sse`, ...extra } });
    try {
      const outcome = await endingRegistry([source]).call(
        'legacy__echo',
        { message: 'over sse' },
        context(),
      );
      expect(outcome).toEqual({ content: 'Echo: over sse', isError: false });
    } finally {
      await source.close();
    }
  });
});

describe('Streamable HTTP servers', () => {
  let server: ChildProcess;
  let port: number;
  beforeAll(async () => ({ server, port } = await startHttpEverything('streamableHttp')));
  afterAll(() => void server.kill());

  it('calls tools of a server configured by url', async () => {
    const source = await startSource({
      remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Team': 'spool' } },
    });
    try {
      const outcome = await endingRegistry([source]).call(
        'remote__echo',
        { message: 'over http' },
        context(),
      );
      expect(outcome).toEqual({ content: 'Echo: over http', isError: false });
    } finally {
      await source.close();
    }
  });

  it('says why an address answered neither Streamable HTTP nor SSE, for each', async () => {
    const logger = new RecordingLogger();
    const source = await startSource(
      { gone: { url: `http://127.0.0.1:${await freePort()}/mcp` } },
      logger,
    );
    try {
      expect(logger.messages()).toEqual([
        expect.stringMatching(
          /^MCP server "gone" could not start: Streamable HTTP: .*fetch failed.*; SSE: .*fetch failed.*; retrying in 1 s$/,
        ),
      ]);
    } finally {
      await source.close();
    }
  });

  it('reports a server that will not start by name, and keeps serving the others', async () => {
    const logger = new RecordingLogger();
    const source = await startSource(
      {
        broken: { command: join(tmpdir(), 'no-such-binary') },
        remote: { url: `http://127.0.0.1:${port}/mcp` },
      },
      logger,
    );
    try {
      expect(
        logger.messages().some((m) => m.startsWith('MCP server "broken" could not start')),
      ).toBe(true);
      expect(source.tools().some((t) => t.spec.name === 'remote__echo')).toBe(true);
    } finally {
      await source.close();
    }
  });
});
