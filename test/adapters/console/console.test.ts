import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextOffset } from '../../support/agent.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { databaseKind } from '../../support/db.ts';
import { FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { PAGE_MARKER_CHARS } from '../../../src/core/markers.ts';
import { freePort, runSpool, startSpool } from '../../support/process.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

let fake: FakeOpenAi;
let dataDir: string;
let databaseEnv: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  fake.fallback = (request) => ({
    content: `heard ${request.messages.filter((m) => m.role === 'user').length} message(s), last: ${request.messages.at(-1)!.content}`,
  });
  dataDir = await mkdtemp(join(tmpdir(), 'spool-console-'));
  // The embedded run exercises the embedded default end to end; the other a real server.
  databaseEnv =
    databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: fileDatabaseUrl() };
});
afterAll(async () => {
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  OPENAI_BASE_URL: fake.baseURL,
  OPENAI_API_KEY: 'sk-live-SECRETVALUE123',
  ...databaseEnv,
  ...extra,
});

describe('npm run chat', () => {
  it('answers each stdin line on stdout, logs only to stderr, and exits at end of input', async () => {
    const session = `s-${Date.now()}`;
    const run = await runSpool(['chat', '--session', session], {
      env: env(),
      input: 'hello\n\nsecond\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('heard 1 message(s), last: hello\nheard 2 message(s), last: second\n');
    expect(run.stderr).toContain('Database:');
  });

  it('loads neither the MCP SDK nor zod without MCP servers, its web pages served, nor the tokenizer for a short reply', async () => {
    // About 100 ms of a start; mcp.json's settings and the pages' sign-in routes once loaded them.
    // The tokenizer (80-200 ms) is loaded only where a byte a token does not show that a request fits.
    const modules = join(dataDir, 'loaded-modules.txt');
    const spool = startSpool(['chat', '--session', `modules-${Date.now()}`], {
      env: { ...env(), LOADED_MODULES_FILE: modules },
      nodeArgs: ['--import', './test/support/loaded-modules.mjs'],
    });
    spool.child.stdin.end('hello\n');
    const run = await spool.done;
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('heard 1 message(s), last: hello\n');
    expect(run.stderr).toContain('Web pages: http://127.0.0.1:');
    const loaded = (await readFile(modules, 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('file:'));
    expect(loaded.some((line) => line.includes('/node_modules/openai/'))).toBe(true);
    expect(
      loaded.filter((line) =>
        /\/node_modules\/(@modelcontextprotocol|zod|gpt-tokenizer)\//.test(line),
      ),
    ).toEqual([]);
  });

  it('schedules with /schedule in SCHEDULE_TIME_ZONE, lists and cancels, and sends no command to the model', async () => {
    const asked = fake.requests.length;
    const run = await runSpool(['chat', '--session', `schedule-${Date.now()}`], {
      env: env({ SCHEDULE_TIME_ZONE: 'Europe/Paris' }),
      input:
        '/schedule "every weekday at 9:00" Summarize the incidents\n/schedule list\n/schedule\n',
    });
    expect(run.code).toBe(0);
    const id =
      /^Scheduled #(\d+): "every weekday at 9:00" \(Europe\/Paris\): Summarize the incidents$/m.exec(
        run.stdout,
      )?.[1];
    expect(id).toBeDefined();
    expect(run.stdout).toContain(`#${id} by <@local>: "every weekday at 9:00" (Europe/Paris)`);
    expect(run.stdout).toContain('Schedule a prompt: `schedule "every weekday at 9:00"');
    const cancel = await runSpool(['chat', '--session', `schedule-${Date.now()}`], {
      env: env(),
      input: `/schedule cancel ${id}\n`,
    });
    expect(cancel.stdout).toBe(`Cancelled schedule #${id}.\n`);
    expect(fake.requests.length).toBe(asked);
  });

  it('keeps the conversation across a restart, per session', async () => {
    const session = `restart-${Date.now()}`;
    await runSpool(['chat', '--session', session], { env: env(), input: 'one\n' });
    const again = await runSpool(['chat', '--session', session], { env: env(), input: 'two\n' });
    expect(again.stdout).toBe('heard 2 message(s), last: two\n');
    const other = await runSpool(['chat', '--session', `${session}-b`], {
      env: env(),
      input: 'three\n',
    });
    expect(other.stdout).toBe('heard 1 message(s), last: three\n');
  });

  it('with LOG_FORMAT=json writes one JSON object a line, and every line of a turn names its platform, conversation and turn', async () => {
    const run = await runSpool(['chat', '--session', `json-${Date.now()}`], {
      env: env({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' }),
      input: 'one\ntwo\n',
    });
    expect(run.code).toBe(0);
    const lines = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const inTurn = lines.filter((l) => l.turn !== undefined);
    // Each turn's step and end events, at least, were logged inside its context.
    expect(inTurn.filter((l) => l.msg === 'Turn finished').map((l) => [l.turn, l.status])).toEqual([
      [1, 'ok'],
      [2, 'ok'],
    ]);
    expect(
      inTurn.some((l) => l.msg === 'Step finished' && l.llmMs !== undefined && l.repairs === 0),
    ).toBe(true);
    for (const line of inTurn)
      expect(line).toMatchObject({
        platform: 'console',
        conversation: expect.stringMatching(/^[0-9a-f-]{36}$/),
        level: expect.any(String),
      });
    expect(new Set(inTurn.map((l) => l.conversation)).size).toBe(1);
  });

  it('tells the user about a failing model in one line, keeps secrets out of logs, serves the next line, and exits 1', async () => {
    fake.enqueue({
      status: 401,
      message: 'Incorrect API key provided: sk-live-SECRETVALUE123',
      type: 'invalid_request_error',
    });
    const run = await runSpool(['chat', '--session', `fail-${Date.now()}`], {
      env: env(),
      input: 'first\nsecond\n',
    });
    const [failure, next] = run.stdout.trim().split('\n');
    expect(failure).toBe(
      'Sorry, the language model request failed: the model endpoint refused our API key (401); whoever runs this bot should check OPENAI_API_KEY.',
    );
    expect(next).toBe('heard 2 message(s), last: second');
    // Every line was answered, but a turn failed: the exit status says so, for scripts.
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('LLM request failed');
    expect(run.stdout + run.stderr).not.toContain('SECRETVALUE123');
  });

  it('stores and answers a line with a NUL byte (PostgreSQL refuses 0x00 in text), and the next line too', async () => {
    const run = await runSpool(['chat', '--session', `nul-${Date.now()}`], {
      env: env(),
      input: 'a\u0000b\nnext\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('heard 1 message(s), last: a\ufffdb\nheard 2 message(s), last: next\n');
    expect(fake.rejections).toEqual([]);
  });

  it('names a base URL without /v1 and an unreachable endpoint at startup, in one line each, and starts anyway', async () => {
    const root = fake.baseURL.replace(/\/v1$/, '');
    const noV1 = await runSpool(['chat', '--session', `nov1-${Date.now()}`], {
      env: env({ OPENAI_BASE_URL: root }),
      input: 'hi\n',
    });
    expect(noV1.stderr).toContain(
      `Model endpoint check, starting anyway: ${root}/models answered 404: OPENAI_BASE_URL probably needs /v1 at its end`,
    );
    expect(noV1.stdout).toMatch(
      /^Sorry, the language model request failed: the model endpoint answered 404 \(.*\): OPENAI_BASE_URL probably needs \/v1 at its end, or OPENAI_MODEL names no model there\.\n$/,
    );
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const down = await runSpool(['chat', '--session', `down-${Date.now()}`], {
      env: env({ OPENAI_BASE_URL: closed, OPENAI_MAX_RETRIES: '0' }),
      input: 'hi\n',
    });
    expect(down.stderr).toContain(
      `Model endpoint check, starting anyway: ${closed} could not be reached: is the server running, and is OPENAI_BASE_URL right?`,
    );
    expect(down.stdout).toBe(
      'Sorry, the language model request failed: the model endpoint could not be reached. Please try again.\n',
    );
    const unknown = await runSpool(['chat', '--session', `model-${Date.now()}`], {
      env: env({ OPENAI_MODEL: 'gpt-nonexistent' }),
      input: '',
    });
    expect(unknown.stderr).toContain(
      `Model endpoint check, starting anyway: ${fake.baseURL} does not list the model "gpt-nonexistent" (OPENAI_MODEL); it lists gpt-4o-mini, fake-model, o3-mini`,
    );
  });

  it('stops at a malformed mcp.json, naming the line, unless MCP_OPTIONAL=true', async () => {
    const broken = join(dataDir, 'broken-mcp.json');
    await writeFile(broken, '{\n  "mcpServers": {\n    "fs": { "command": "node" ,, }\n  }\n}\n');
    const refused = await runSpool(['chat'], { env: env({ MCP_CONFIG: broken }), input: 'hi\n' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${broken} is not valid JSON at line 3, column`);
    expect(refused.stdout).toBe('');
    const optional = await runSpool(['chat', '--session', `mcp-optional-${Date.now()}`], {
      env: env({ MCP_CONFIG: broken, MCP_OPTIONAL: 'true' }),
      input: 'hi\n',
    });
    expect(optional.code).toBe(0);
    expect(optional.stderr).toContain('STARTING WITHOUT ANY MCP TOOLS (MCP_OPTIONAL=true)');
    expect(optional.stdout).toBe('heard 1 message(s), last: hi\n');
  });

  it('gives up on a database that accepts connections and never answers, naming it', async () => {
    const silent = createServer(() => {}); // takes the connection, says nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const run = await runSpool(['chat'], {
        env: env({
          DATABASE_URL: `postgresql://spool@127.0.0.1:${port}/spool`,
          DATABASE_CONNECT_TIMEOUT_MS: '1000',
        }),
        input: 'hi\n',
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `PostgreSQL at 127.0.0.1:${port}/spool is not answering (Connection terminated due to connection timeout; waited up to 1 s)`,
      );
    } finally {
      silent.close();
    }
  });

  it('prints its usage on --help, and on an unknown option exits 2 with it', async () => {
    const help = await runSpool(['--help'], { env: {} });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('npm run chat [-- --session NAME]');
    const unknown = await runSpool(['chat', '--sesion', 'x'], { env: {} });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--sesion'");
    expect(unknown.stderr).toContain('Usage:');
  });

  it('reaches the model through HTTP_PROXY, and directly for a host in NO_PROXY', async () => {
    const proxy = await startConnectProxy();
    const forwarded = proxy.tunnels;
    const HTTP_PROXY = proxy.url;
    try {
      const proxied = await runSpool(['chat', '--session', `proxy-${Date.now()}`], {
        env: env({ HTTP_PROXY }),
        input: 'hi\n',
      });
      expect(proxied.stdout).toBe('heard 1 message(s), last: hi\n');
      expect(forwarded.length).toBeGreaterThan(0);
      expect(new Set(forwarded)).toEqual(new Set([new URL(fake.baseURL).host]));
      forwarded.length = 0;
      const direct = await runSpool(['chat', '--session', `direct-${Date.now()}`], {
        env: env({ HTTP_PROXY, NO_PROXY: '127.0.0.1' }),
        input: 'hi\n',
      });
      expect(direct.stdout).toBe('heard 1 message(s), last: hi\n');
      expect(forwarded).toEqual([]);
    } finally {
      proxy.stop();
    }
  });

  it('names every bad setting at startup and exits 2', async () => {
    const run = await runSpool(['chat'], {
      env: {
        ...env(),
        TOOL_RESULT_MAX_CHARS: 'lots',
        MAX_CONTINUATIONS: '-1',
        DATABASE_URL: 'mysql://u:hunter2@h/db',
        SCHEDULE_TIME_ZONE: 'Mars/Olympus',
      },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'TOOL_RESULT_MAX_CHARS must be a whole number of at least 1 (got "lots")',
    );
    expect(run.stderr).toContain(
      'MAX_CONTINUATIONS must be a whole number of at least 0 (got "-1")',
    );
    expect(run.stderr).toContain('DATABASE_URL must be a postgresql:// URL');
    expect(run.stderr).toContain('SCHEDULE_TIME_ZONE: "Mars/Olympus" is not a time zone');
    expect(run.stderr).not.toContain('hunter2');
  });

  it('starts with TOOL_RESULT_MAX_CHARS=4000 and pages of that size, and reads a 24,591-char file whole through pages, or greps it', async () => {
    const workspace = join(dataDir, 'workspace');
    await mkdir(workspace, { recursive: true });
    const lines = Array.from(
      { length: 700 },
      (_, i) => `entry ${String(i).padStart(4, '0')}: all quiet on the line`,
    );
    const file = `${lines.join('\n')}\nTHE CODE IS 4417\n`.padEnd(24_591, '.');
    expect(file.length).toBe(24_591);
    await writeFile(join(workspace, 'log.txt'), file);
    const server = createRequire(import.meta.url).resolve(
      '@modelcontextprotocol/server-filesystem/dist/index.js',
    );
    await writeFile(
      join(dataDir, 'mcp-fs.json'),
      JSON.stringify({
        mcpServers: { fs: { command: process.execPath, args: [server, workspace] } },
      }),
    );
    const previous = fake.fallback;
    // Reads on from each marker, or greps when asked to; then answers with what it read.
    fake.fallback = (request) => {
      const last = request.messages.at(-1)!;
      const content = last.content ?? '';
      const read = (args: Record<string, unknown>) => ({
        toolCalls: [
          {
            id: 'r',
            name: 'get_continuation',
            arguments: JSON.stringify({
              tool_call_id: /tool_call_id="([^"]+)"/.exec(content)![1],
              ...args,
            }),
          },
        ],
      });
      if (last.role === 'user')
        return {
          toolCalls: [
            {
              id: 'f',
              name: 'fs__read_text_file',
              arguments: JSON.stringify({ path: join(workspace, 'log.txt') }),
            },
          ],
        };
      const grep = lastUserText(request) === 'grep';
      if (content.startsWith('[truncated') || /Read on with/.test(content)) {
        if (grep && !content.includes('matching lines'))
          return read({ offset: 0, pattern: 'code is \\d+' });
        if (!grep) return read({ offset: nextOffset(content) });
      }
      const tools = request.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
      return {
        content: `${tools.length} tool messages, longest ${Math.max(...tools.map((t) => t.length))}; ${/THE CODE IS \d+/.exec(tools.join(''))?.[0] ?? 'no code'}`,
      };
    };
    try {
      const run = await runSpool(['chat', '--session', `small-${Date.now()}`], {
        // Pages the preview's size (CONTINUATION_CHUNK_CHARS): with the window known, as it is by
        // default, a page would take the whole rest of the file.
        env: env({
          TOOL_RESULT_MAX_CHARS: '4000',
          CONTINUATION_CHUNK_CHARS: String(4_000 - PAGE_MARKER_CHARS),
          MCP_CONFIG: join(dataDir, 'mcp-fs.json'),
        }),
        input: 'page\ngrep\n',
      });
      expect(run.stderr).not.toContain('Invalid configuration');
      expect(run.code).toBe(0);
      const [paged, pagedLink, grepped, greppedLink] = run.stdout.trim().split('\n');
      expect(paged).toMatch(/; THE CODE IS 4417$/);
      expect(grepped).toMatch(/; THE CODE IS 4417$/);
      // Under each reply, the address of the file's whole result, read as a preview, on the local
      // web pages.
      const pages = /Web pages: (http:\/\/127\.0\.0\.1:\d+)\/web\/local\?key=/.exec(run.stderr)![1];
      const reads = fake.requests.flatMap((r) =>
        r.messages.flatMap((m) =>
          (m.tool_calls ?? [])
            // Spool's own ids (a finished turn's calls are sent under short aliases).
            .filter((c) => c.function.arguments.includes('log.txt') && c.id.startsWith('call_'))
            .map((c) => c.id),
        ),
      );
      expect([pagedLink, greppedLink]).toEqual(
        [...new Set(reads)].map((id) => `View the whole result: ${pages}/web/results/${id}`),
      );
      expect(fake.rejections).toEqual([]);
      // Each page fits in 4,000 chars, and the pages rebuild the file exactly.
      const asked = (r: (typeof fake.requests)[number]) => lastUserText(r);
      const pageRequests = fake.requests.filter(
        (r) => asked(r) === 'page' && r.messages.at(-1)!.role === 'tool',
      );
      const shown = pageRequests.map((r) => r.messages.at(-1)!.content ?? '');
      expect(shown.every((c) => c.length <= 4_000)).toBe(true);
      const head = shown[0]!.slice(0, shown[0]!.indexOf('\n[truncated'));
      const tail = shown[0]!.slice(shown[0]!.indexOf(']\n', head.length) + 2);
      // What each page adds; the last one ends where the preview's tail, in view above, begins.
      const rest = shown
        .slice(1)
        .map((c) => c.replace(/\n\[(?:showing |\d+-\d+: in view above)[^\n]*\]/g, ''));
      expect(head + rest.join('') + tail).toBe(file);
      // Grep went straight to the line: one request after the preview.
      const grepRequests = fake.requests.filter(
        (r) => asked(r) === 'grep' && r.messages.at(-1)!.role === 'tool',
      );
      expect(grepRequests).toHaveLength(2);
      expect(grepRequests.at(-1)!.messages.at(-1)!.content).toBe(
        `1 matching lines for ${JSON.stringify('code is \\d+')} (case-insensitive) in 24591 chars from offset 0:\n@${file.indexOf('CODE IS')}: THE CODE IS 4417`,
      );
    } finally {
      fake.fallback = previous;
    }
  });
});
