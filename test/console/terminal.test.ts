import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseKind } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { runSpool } from '../support/process.ts';
import { onTerminal } from '../support/terminal.ts';

let fake: FakeOpenAi;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  fake.fallback = (request) => ({ content: `heard ${request.messages.filter((m) => m.role === 'user').length} message(s), last: ${request.messages.at(-1)!.content}` });
  dataDir = await mkdtemp(join(tmpdir(), 'spool-terminal-'));
  const database: Record<string, string> = databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: inject('databaseUrl') };
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
