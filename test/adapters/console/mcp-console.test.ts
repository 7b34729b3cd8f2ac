import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind, scratchDatabase } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import {
  EVERYTHING_SERVER as EVERYTHING,
  running,
  runSpool,
  serverPidsBelow,
  startSpool,
  until,
} from '../../support/process.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

const TICKETS = fileURLToPath(new URL('../../fixtures/ticket-mcp-server.mjs', import.meta.url));
const LINGERING = fileURLToPath(
  new URL('../../fixtures/lingering-mcp-server.mjs', import.meta.url),
);

let fake: FakeOpenAi;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dataDir = await mkdtemp(join(tmpdir(), 'spool-mcp-console-'));
  const database: Record<string, string> =
    databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: fileDatabaseUrl() };
  env = { OPENAI_BASE_URL: fake.baseURL, ...database };
});
afterAll(async () => {
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the console with MCP tools', () => {
  it('reads and summarises a workspace file with the shipped mcp.example.json', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'ls', name: 'fs__list_directory', arguments: '{"path":"."}' }] },
      {
        toolCalls: [{ id: 'read', name: 'fs__read_text_file', arguments: '{"path":"README.md"}' }],
      },
      (request) => ({ content: `Summary: ${request.messages.at(-1)!.content!.split('\n')[0]}` }),
    );
    const run = await runSpool(['chat', '--session', `fs-${Date.now()}`], {
      env: { ...env, MCP_CONFIG: 'mcp.example.json' },
      input: 'summarise the workspace readme\n',
    });
    expect(run.stdout).toBe('Summary: # The workspace\n');
    expect(fake.requests[1]!.messages.at(-1)!.content).toContain('[FILE] README.md');
    expect(fake.rejections).toEqual([]);
  });

  it("offers a server's prompts as /prompt: lists them, names what is missing, and sends the prompt's text as the message", async () => {
    const mcpConfig = join(dataDir, 'everything.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      }),
    );
    fake.requests.length = 0;
    fake.enqueue((request) => ({ content: `heard: ${request.messages.at(-1)!.content}` }));
    const run = await runSpool(['chat', '--session', `prompt-${Date.now()}`], {
      env: { ...env, MCP_CONFIG: mcpConfig },
      input:
        '/prompt\n/prompt everything args-prompt state=Texas\n/prompt everything args-prompt city="Le Mans" state=Sarthe\n',
    });
    const [list, missing, heard] = run.stdout.split(/\n(?=Prompts:|`everything|heard:)/);
    expect(list).toContain('Prompts:\n');
    expect(list).toContain(
      '• `everything args-prompt city=… [state=…]`: A prompt with two arguments, one required and one optional',
    );
    expect(missing!.trim()).toBe(
      '`everything args-prompt`: it needs city. Usage: `everything args-prompt city=… [state=…]`',
    );
    expect(heard!.trim()).toBe("heard: What's weather in Le Mans, Sarthe?");
    // Only the prompt that could be given reached the model, as the person's message.
    expect(fake.requests).toHaveLength(1);
  });

  it('shows /usage, priced, and refuses a message past a cap on the person, naming it', async () => {
    // A database of its own: today's totals are this test's alone.
    const own = await mkdtemp(join(tmpdir(), 'spool-usage-'));
    const scratch = await scratchDatabase('spool_usage');
    const policy = join(own, 'policy.json');
    await writeFile(
      policy,
      JSON.stringify({
        rules: [],
        prices: { 'gpt-4o-mini': { input: 150, output: 600 } },
        currency: 'USD',
        caps: [{ per: 'user', period: 'day', tokens: 1 }],
      }),
    );
    try {
      fake.served.length = 0;
      fake.enqueue({ content: 'Counted.' });
      const run = await runSpool(['chat', '--session', `usage-${Date.now()}`], {
        env: {
          OPENAI_BASE_URL: fake.baseURL,
          OPENAI_MODEL: 'gpt-4o-mini',
          POLICY_FILE: policy,
          DATABASE_URL: scratch.url,
        },
        input: 'count me\nand again\n/usage\n/usage this week\n',
      });
      const [served] = fake.served;
      expect(fake.served).toHaveLength(1);
      const u = served!.usage;
      const cost =
        ((u.prompt_tokens - u.prompt_tokens_details.cached_tokens) * 150 +
          u.prompt_tokens_details.cached_tokens * 150 +
          u.completion_tokens * 600) /
        1_000_000;
      const lines = run.stdout.split('\n');
      expect(lines[0]).toBe('Counted.');
      expect(lines[1]).toMatch(
        new RegExp(
          `^You have reached your cap of 1 tokens a day \\(${u.total_tokens} tokens used\\)\\. It resets at 00:00 UTC, in `,
        ),
      );
      expect(run.stdout).toContain(`Today: ${u.total_tokens} tokens · ${cost.toFixed(2)} USD`);
      expect(run.stdout).toContain(`• console: ${u.total_tokens} tokens`);
      // Words /usage does not take are named, not taken for a message or ignored.
      expect(lines).toContain('I did not understand "this week": `/usage` takes nothing.');
    } finally {
      await scratch.drop();
      await rm(own, { recursive: true, force: true });
    }
  });

  it('writes the whole stored result of an earlier tool run to a file with /result', async () => {
    fake.requests.length = 0;
    fake.enqueue(
      {
        toolCalls: [{ id: 'read', name: 'fs__read_text_file', arguments: '{"path":"README.md"}' }],
      },
      { content: 'Read it.' },
    );
    await runSpool(['chat', '--session', `result-${Date.now()}`], {
      env: { ...env, MCP_CONFIG: 'mcp.example.json' },
      input: 'read the readme\n',
    });
    const id = fake.requests[1]!.messages.at(-1)!.tool_call_id!;
    const path = join(dataDir, 'readme-result.txt');
    const run = await runSpool(['chat', '--session', `result-${Date.now()}`], {
      env: { ...env, MCP_CONFIG: 'mcp.example.json' },
      input: `/result ${id} ${path}\n/result call_unknown ${path}\n`,
    });
    const readme = await readFile('workspace/README.md', 'utf8');
    // With the address of its page on the local web pages.
    const pages = /Web pages: (http:\/\/127\.0\.0\.1:\d+)\/web\/local\?key=/.exec(run.stderr)![1];
    expect(run.stdout).toBe(
      `The full result of fs__read_text_file (${id}): ${readme.length} characters. Written to ${path}.\nView the whole result: ${pages}/web/results/${id}\nNo tool run with tool_call_id "call_unknown" in this channel. Recall shows the ids.\n`,
    );
    expect(await readFile(path, 'utf8')).toBe(readme);
    expect(fake.requests).toHaveLength(2);
  });

  it('recovers a conversation whose process was killed between a tool call and its result', async () => {
    // A call with a side effect (create_ticket: destructiveHint, not idempotent): the resumed turn
    // does not send it again. A read-only call would be sent again instead (test/core/agent).
    const mcpConfig = join(dataDir, 'mcp.json');
    const callsFile = join(dataDir, 'ticket-calls');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          tickets: {
            command: process.execPath,
            args: [TICKETS],
            env: { CALLS_FILE: callsFile, TICKET_DELAY_MS: '60000' },
          },
        },
      }),
    );
    const session = `killed-${Date.now()}`;
    // On a server other processes may share, the killed one's lease is taken over once it has run
    // out (on the embedded database, at once): a short one, not the default 15 s.
    const envWithTickets = { ...env, MCP_CONFIG: mcpConfig, LEASE_TTL_MS: '2000' };
    fake.requests.length = 0;
    fake.enqueue({
      toolCalls: [
        { id: 'call_slow', name: 'tickets__create_ticket', arguments: '{"title":"the job"}' },
      ],
    });
    const first = startSpool(['chat', '--session', session], { env: envWithTickets });
    first.child.stdin.write('run the slow job\n');
    // Wait until the call is at the server (it answers in a minute), then kill -9.
    await until(() => (existsSync(callsFile) ? true : undefined), 30_000);
    first.child.kill('SIGKILL');
    await first.done;

    fake.requests.length = 0;
    fake.enqueue({ content: 'The job was interrupted.' }, { content: 'No, it did not finish.' });
    const second = await runSpool(['chat', '--session', session], {
      env: envWithTickets,
      input: 'did it finish?\n',
    });
    // The killed message is still in the inbox: the next start resumes its turn first, from the
    // stored transcript, without storing the question again.
    expect(second.stdout).toBe('The job was interrupted.\nNo, it did not finish.\n');
    expect(fake.rejections).toEqual([]);
    const [resumed, next] = fake.requests.map((r) => r.messages);
    expect(resumed!.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(resumed![3]!.content).toMatch(/interrupted before it finished/);
    expect((await readFile(callsFile, 'utf8')).split('\n').filter(Boolean)).toEqual([
      'create_ticket',
    ]);
    expect(next!.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'run the slow job',
      'did it finish?',
    ]);
  });

  it('leaves no MCP server running when it is killed at once (SIGKILL to its node process alone, as the OOM killer does)', async () => {
    // A server that outlives its stdin (a pool, a watcher, a container): the official ones exit on
    // EOF.
    const mcpConfig = join(dataDir, 'mcp-lingering.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: { lingering: { command: process.execPath, args: [LINGERING] } },
      }),
    );
    const bot = startSpool(['chat', '--session', `oom-${Date.now()}`], {
      env: { ...env, MCP_CONFIG: mcpConfig },
    });
    bot.done.catch(() => {});
    const [server] = await until(() => {
      const found = serverPidsBelow(bot.child.pid!, LINGERING);
      return found.length ? found : undefined;
    }, 30_000);
    bot.child.kill('SIGKILL');
    await bot.done.catch(() => {});
    await until(() => (running(server!) ? undefined : true), 15_000);
  });
});
