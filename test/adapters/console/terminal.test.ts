import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { EVERYTHING_SERVER, REPO_ROOT, runSpool } from '../../support/process.ts';
import { onTerminal } from '../../support/terminal.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

let fake: FakeOpenAi;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  fake.fallback = (request) => ({
    content: `heard ${request.messages.filter((m) => m.role === 'user').length} message(s), last: ${request.messages.at(-1)!.content}`,
  });
  dataDir = await mkdtemp(join(tmpdir(), 'spool-terminal-'));
  const database: Record<string, string> =
    databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: fileDatabaseUrl() };
  env = { OPENAI_BASE_URL: fake.baseURL, ...database };
});
afterAll(async () => {
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm run chat on a terminal', () => {
  it('welcomes, edits lines with history, keeps logs off the indicator, and quits on Ctrl-C releasing the lock', async () => {
    const session = `tty-${Date.now()}`;
    const tty = onTerminal(['chat', '--session', session], { ...env, LOG_LEVEL: 'debug' });
    await tty.waitFor(/Spool · model gpt-4o-mini · .+ · 2 tools · Ctrl-D or Ctrl-C quits/);
    await tty.waitFor('you › ');
    tty.type('hello\r');
    await tty.waitFor('heard 1 message(s), last: hello');
    // The up arrow brings the last line back (not "\x1b[A" sent as text); Enter sends it again.
    const before = tty.screen().length;
    tty.type('\x1b[A\r');
    await tty.waitFor('heard 2 message(s), last: hello', before);
    // Debug lines were logged while "thinking…" showed: each starts a line of its own.
    expect(tty.screen()).toContain('Step finished');
    expect(tty.screen()).not.toMatch(/thinking…\d{4}-\d\d-\d\dT/);
    expect(tty.screen()).not.toMatch(/you › \d{4}-\d\d-\d\dT/);
    tty.type('\x03');
    expect(await tty.exited).toBe(0);
    if (databaseKind() === 'embedded') expect(existsSync(join(dataDir, 'spool.lock'))).toBe(false);
    // Nothing was left behind: the next start opens the same session at once.
    const next = await runSpool(['chat', '--session', session], { env, input: 'again\n' });
    expect(next.stdout).toBe('heard 3 message(s), last: again\n');
  });

  it('prints --help and exits 0', async () => {
    const tty = onTerminal(['chat', '--help'], env);
    await tty.waitFor('Usage:');
    expect(await tty.exited).toBe(0);
  });
});

describe('approvals in the console', () => {
  let policyFile: string;
  const asksSearch: FakeOpenAi['fallback'] = (request) =>
    request.messages.at(-1)!.role === 'user'
      ? {
          toolCalls: [
            {
              id: 's',
              name: 'search_history',
              arguments: JSON.stringify({ query: request.messages.at(-1)!.content }),
            },
          ],
        }
      : { content: `tool said: ${request.messages.at(-1)!.content}` };

  beforeAll(async () => {
    policyFile = join(dataDir, 'policy.json');
    await writeFile(
      policyFile,
      JSON.stringify({ rules: [{ match: { platform: 'console' }, approve: ['search_history'] }] }),
    );
  });

  it('asks y/N on a terminal: y runs the call, anything else denies it', async () => {
    fake.fallback = asksSearch;
    const tty = onTerminal(['chat', '--session', `approve-${Date.now()}`], {
      ...env,
      POLICY_FILE: policyFile,
    });
    try {
      await tty.waitFor('you › ');
      tty.type('zebra\r');
      await tty.waitFor('Approve? [y/N] ');
      expect(tty.screen()).toContain('Spool wants to run `search_history` with:');
      tty.type('y\r');
      await tty.waitFor('tool said: No earlier messages or tool runs in this channel match');
      const before = tty.screen().length;
      tty.type('okapi\r');
      await tty.waitFor('Approve? [y/N] ', before);
      tty.type('\r');
      await tty.waitFor('The call was not run: local denied it.', before);
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
    }
  });

  it('denies the call when there is no terminal to ask on, and says why', async () => {
    fake.fallback = asksSearch;
    try {
      const piped = await runSpool(['chat', '--session', `piped-${Date.now()}`], {
        env: { ...env, POLICY_FILE: policyFile },
        input: 'zebra\n',
      });
      expect(piped.stdout).toContain(
        'The call was not run: local denied it (there is no terminal to ask on, so nobody could approve it).',
      );
    } finally {
      fake.fallback = undefined;
    }
  });
});

describe('a tool that asks a question, on a terminal', () => {
  let mcpConfig: string;
  beforeAll(async () => {
    mcpConfig = join(dataDir, 'asking-mcp.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          asker: {
            command: process.execPath,
            args: [join(REPO_ROOT, 'test/fixtures/asking-mcp-server.mjs')],
          },
          everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
        },
      }),
    );
  });

  it('asks field by field, asks again for a value the form cannot take, and the server gets the answer', async () => {
    fake.fallback = (request) =>
      request.messages.at(-1)!.role === 'tool'
        ? { content: `tool said: ${request.messages.at(-1)!.content}` }
        : { toolCalls: [{ id: 'ask', name: 'asker__sign_up', arguments: '{}' }] };
    const tty = onTerminal(['chat', '--session', `form-${Date.now()}`], {
      ...env,
      MCP_CONFIG: mcpConfig,
    });
    try {
      await tty.waitFor('you › ');
      tty.type('sign me up\r');
      await tty.waitFor('Fill it in? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain('asker asks: Who is signing up?');
      tty.type('y\r');
      await tty.waitFor('Name (required): ');
      tty.type('Ada\r');
      await tty.waitFor('Seats [1]: ');
      tty.type('12\r');
      await tty.waitFor('Seats: at most 10');
      const before = tty.screen().length;
      tty.type('2\r');
      await tty.waitFor(
        'tool said: got {"action":"accept","content":{"name":"Ada","seats":2}}',
        before,
      );
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });

  it('declines when there is no terminal to ask on', async () => {
    fake.fallback = (request) =>
      request.messages.at(-1)!.role === 'tool'
        ? { content: `tool said: ${request.messages.at(-1)!.content}` }
        : { toolCalls: [{ id: 'ask', name: 'asker__sign_up', arguments: '{}' }] };
    try {
      const piped = await runSpool(['chat', '--session', `form-piped-${Date.now()}`], {
        env: { ...env, MCP_CONFIG: mcpConfig },
        input: 'sign me up\n',
      });
      expect(piped.stdout).toContain('tool said: got {"action":"decline"}');
    } finally {
      fake.fallback = undefined;
    }
  });

  it('shows what Spool is doing on the bottom line, in place of "thinking…"', async () => {
    fake.fallback = (request) =>
      request.messages.at(-1)!.role === 'tool'
        ? { content: 'finished' }
        : {
            toolCalls: [
              {
                id: 'long',
                name: 'everything__trigger-long-running-operation',
                arguments: '{"duration":5,"steps":5}',
              },
            ],
          };
    const tty = onTerminal(['chat', '--session', `status-${Date.now()}`], {
      ...env,
      MCP_CONFIG: mcpConfig,
    });
    try {
      await tty.waitFor('you › ');
      tty.type('go\r');
      await tty.waitFor('running everything__trigger-long-running-operation');
      // Ctrl-C once the prompt is back: the turn is over, so it quits.
      await tty.waitFor(/finished[^]*you › /);
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });

  it('stops a turn on Ctrl-C, keeps what it stored for "go on", and exits on Ctrl-C at the prompt', async () => {
    fake.fallback = (request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'user' && last.content === 'go on')
        return {
          content: `picking up after ${request.messages.filter((m) => m.role === 'tool').length} tool result(s)`,
        };
      return {
        toolCalls: [
          {
            id: 'long',
            name: 'everything__trigger-long-running-operation',
            arguments: '{"duration":30,"steps":30}',
          },
        ],
      };
    };
    const tty = onTerminal(['chat', '--session', `stop-${Date.now()}`], {
      ...env,
      MCP_CONFIG: mcpConfig,
    });
    try {
      await tty.waitFor('you › ');
      tty.type('take your time\r');
      await tty.waitFor('running everything__trigger-long-running-operation');
      const stoppedAt = Date.now();
      tty.type('\x03');
      await tty.waitFor('Stopped. What I did so far is kept');
      // Far sooner than the 30 s the tool would have taken.
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
      const before = tty.screen().length;
      tty.type('go on\r');
      await tty.waitFor('picking up after 1 tool result(s)', before);
      // The prompt is back once the reply is stored as answered: Ctrl-C now quits.
      await tty.waitFor(/picking up[^]*you › /, before);
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });
});
