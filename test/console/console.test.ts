import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseKind } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { runSpool } from '../support/process.ts';

let fake: FakeOpenAi;
let dataDir: string;
let databaseEnv: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  fake.fallback = (request) => ({ content: `heard ${request.messages.filter((m) => m.role === 'user').length} message(s), last: ${request.messages.at(-1)!.content}` });
  dataDir = await mkdtemp(join(tmpdir(), 'spool-console-'));
  // The embedded run exercises the embedded default end to end; the other a real server.
  databaseEnv = databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: inject('databaseUrl') };
});
afterAll(async () => {
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'sk-live-SECRETVALUE123', ...databaseEnv, ...extra });

describe('npm run chat', () => {
  it('answers each stdin line on stdout, logs only to stderr, and exits at end of input', async () => {
    const session = `s-${Date.now()}`;
    const run = await runSpool(['chat', '--session', session], { env: env(), input: 'hello\n\nsecond\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('heard 1 message(s), last: hello\nheard 2 message(s), last: second\n');
    expect(run.stderr).toContain('Database:');
  });

  it('keeps the conversation across a restart, per session', async () => {
    const session = `restart-${Date.now()}`;
    await runSpool(['chat', '--session', session], { env: env(), input: 'one\n' });
    const again = await runSpool(['chat', '--session', session], { env: env(), input: 'two\n' });
    expect(again.stdout).toBe('heard 2 message(s), last: two\n');
    const other = await runSpool(['chat', '--session', `${session}-b`], { env: env(), input: 'three\n' });
    expect(other.stdout).toBe('heard 1 message(s), last: three\n');
  });

  it('tells the user about a failing model in one line, keeps secrets out of logs, and serves the next line', async () => {
    fake.enqueue({ status: 401, message: 'Incorrect API key provided: sk-live-SECRETVALUE123', type: 'invalid_request_error' });
    const run = await runSpool(['chat', '--session', `fail-${Date.now()}`], { env: env(), input: 'first\nsecond\n' });
    const [failure, next] = run.stdout.trim().split('\n');
    expect(failure).toBe('Sorry, the language model request failed: the model endpoint refused our API key (401). Please try again.');
    expect(next).toBe('heard 2 message(s), last: second');
    expect(run.stderr).toContain('LLM request failed');
    expect(run.stdout + run.stderr).not.toContain('SECRETVALUE123');
  });

  it('names every bad setting at startup and exits 2', async () => {
    const run = await runSpool(['chat'], { env: { ...env(), TOOL_RESULT_MAX_CHARS: 'lots', MAX_CONTINUATIONS: '-1', DATABASE_URL: 'mysql://u:hunter2@h/db' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('TOOL_RESULT_MAX_CHARS must be a whole number of at least 1 (got "lots")');
    expect(run.stderr).toContain('MAX_CONTINUATIONS must be a whole number of at least 0 (got "-1")');
    expect(run.stderr).toContain('DATABASE_URL must be a postgresql:// URL');
    expect(run.stderr).not.toContain('hunter2');
  });
});
