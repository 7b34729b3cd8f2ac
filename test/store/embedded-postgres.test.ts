import { existsSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareTemplate, startEmbeddedPostgres } from '../../src/store/embedded-postgres.ts';
import { MIGRATIONS_DIR, readMigrations } from '../../src/store/migrate.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { running, runSpool, startSpool, until } from '../support/process.ts';

let llm: FakeOpenAi;
let privateDir: string;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = (request) => ({
    content: `you said: ${request.messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .join(' | ')}`,
  });
  // Two levels below a private (0700) directory, as a checkout under /root is: run as root, the
  // server's own user must still reach it.
  privateDir = await mkdtemp(join(tmpdir(), 'spool-embedded-kill-'));
  dataDir = join(privateDir, 'checkout', 'data');
  env = { OPENAI_BASE_URL: llm.baseURL, DATA_DIR: dataDir };
});
afterAll(async () => {
  await llm.stop();
  await rm(privateDir, { recursive: true, force: true });
});

/** The embedded server's postmaster, while its pid file says it runs. */
function serverPid(dir = dataDir): number | undefined {
  try {
    const pid = Number(
      readFileSync(join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Unanswered inbox rows, read over the server's own socket. */
async function pendingMessages(): Promise<number> {
  const client = new pg.Client({
    connectionString: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(join(dataDir, 'postgres'))}`,
  });
  await client.connect();
  try {
    return (
      await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM inbox WHERE status = 'pending'",
      )
    ).rows[0]!.n;
  } finally {
    await client.end();
  }
}

async function firstLine(spool: ReturnType<typeof startSpool>): Promise<string> {
  return new Promise((resolve) =>
    spool.child.stdout.once('data', (d: Buffer) => resolve(d.toString())),
  );
}

describe('the embedded PostgreSQL server', () => {
  it('refuses a second Spool on the same data directory with a clear message', async () => {
    const first = startSpool(['chat', '--session', 'lock'], { env });
    first.child.stdin.write('hello\n');
    expect(await firstLine(first)).toBe('you said: hello\n');
    const second = await runSpool(['chat'], { env, input: 'me too\n' });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      `Another Spool process (pid ${first.child.pid}) is using ${dataDir}`,
    );
    first.child.stdin.end();
    expect((await first.done).code).toBe(0);
    // A clean exit stops the server too.
    expect(serverPid()).toBeUndefined();
  });

  it('leaves no server running and the directory unlocked when the start is refused after the server was begun', async () => {
    // The server is started before Spool's modules load; a broken mcp.json is found after.
    const dir = join(privateDir, 'refused');
    const first = await runSpool(['chat'], { env: { ...env, DATA_DIR: dir }, input: 'hello\n' });
    expect(first.code).toBe(0);
    const mcpConfig = join(privateDir, 'broken-mcp.json');
    await writeFile(mcpConfig, '{ not json');
    const log = join(dir, 'postgres', 'server.log');
    const logged = readFileSync(log, 'utf8').length;
    const run = await runSpool(['chat'], {
      env: { ...env, DATA_DIR: dir, MCP_CONFIG: mcpConfig },
      input: 'hello\n',
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    // It was started, and stopped.
    expect(readFileSync(log, 'utf8').slice(logged)).toMatch(/ready to accept connections/);
    expect(serverPid(dir)).toBeUndefined();
    expect(existsSync(join(dir, 'spool.lock'))).toBe(false);
  });

  it('takes over a lock whose pid now belongs to another process, as after a container restart', async () => {
    // A live process that is not Spool, holding the pid the lock names; the start time is the old
    // holder's.
    const other = spawn('sleep', ['60']);
    try {
      await mkdir(dataDir, { recursive: true });
      await writeFile(join(dataDir, 'spool.lock'), `${other.pid} 12345`);
      const run = await runSpool(['chat', '--session', 'reused'], { env, input: 'hello again\n' });
      expect(run.stderr).not.toContain('Another Spool process');
      expect(run.stdout).toBe('you said: hello again\n');
      expect(run.code).toBe(0);
    } finally {
      other.kill();
    }
  });

  it('outlives a SIGKILLed Spool, is adopted by the next start, which serves with nothing lost, and is stopped by it', async () => {
    const killed = startSpool(['chat', '--session', 'kill'], { env });
    killed.child.stdin.write('the code is 7319\n');
    expect(await firstLine(killed)).toBe('you said: the code is 7319\n');
    // Killed once its reply is recorded as delivered (stdout and the database cannot change
    // together).
    await expect.poll(() => pendingMessages(), { timeout: 10_000 }).toBe(0);
    const server = serverPid();
    killed.child.kill('SIGKILL');
    await killed.done;
    expect(server).toBeDefined();
    expect(serverPid()).toBe(server);

    const next = await runSpool(['chat', '--session', 'kill'], {
      env,
      input: 'what is the code?\n',
    });
    expect(next.stdout).toBe('you said: the code is 7319 | what is the code?\n');
    expect(next.code).toBe(0);
    expect(serverPid()).toBeUndefined();
  });
});

describe('the embedded server killed under a running bot', () => {
  it('is started again by the bot, which goes on answering without a restart', async () => {
    const dir = join(privateDir, 'keeper');
    const bot = startSpool(['chat', '--session', 'keeper'], { env: { ...env, DATA_DIR: dir } });
    bot.done.catch(() => {});
    const postmaster = () => {
      try {
        return Number(readFileSync(join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return undefined;
      }
    };
    let stdout = '';
    bot.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      bot.child.stdin.write('before\n');
      await until(() => (stdout.includes('you said: before') ? true : undefined), 30_000);
      const killed = postmaster()!;
      process.kill(killed, 'SIGKILL');
      // A new postmaster, started by the bot: its pid file names another process, which runs.
      await until(() => {
        const pid = postmaster();
        return pid !== undefined && pid !== killed && running(pid) ? true : undefined;
      }, 60_000);
      bot.child.stdin.write('after\n');
      await until(() => (stdout.includes('you said: before | after') ? true : undefined), 60_000);
      bot.child.stdin.end();
      expect((await bot.done).code).toBe(0);
    } finally {
      bot.child.kill('SIGKILL');
    }
  });
});

describe('a first start', () => {
  /** The cluster's system identifier: initdb draws a new one, a copy keeps its template's. */
  const systemId = (pgdata: string) =>
    readFileSync(join(pgdata, 'global', 'pg_control'))
      .subarray(0, 8)
      .toString('hex');

  it('copies the cluster npm ci prepared instead of running initdb, and a copy left half made by a killed start is made again', async () => {
    const template = await prepareTemplate();
    expect(template).toBeDefined();
    const fresh = join(privateDir, 'fresh');
    const first = await runSpool(['chat'], {
      env: { ...env, DATA_DIR: fresh },
      input: 'first words\n',
    });
    expect(first.stdout).toBe('you said: first words\n');
    expect(systemId(join(fresh, 'postgres'))).toBe(systemId(template!));

    // A start killed while it copied: a data directory with no cluster, and half a copy beside it.
    const killed = join(privateDir, 'killed');
    await mkdir(join(killed, 'postgres'), { recursive: true });
    await mkdir(join(killed, 'postgres.new', 'base'), { recursive: true });
    await writeFile(join(killed, 'postgres.new', 'PG_VERSION'), '18\n');
    const next = await runSpool(['chat'], {
      env: { ...env, DATA_DIR: killed },
      input: 'after the kill\n',
    });
    expect(next.stdout).toBe('you said: after the kill\n');
    expect(next.code).toBe(0);
    expect(existsSync(join(killed, 'postgres.new'))).toBe(false);
    expect(systemId(join(killed, 'postgres'))).toBe(systemId(template!));
  });

  it('finds every migration applied in the template, and never copies one made before a migration was added', async () => {
    const migrations = await readMigrations(MIGRATIONS_DIR);
    const older = join(privateDir, 'older-migrations');
    for (const { name } of migrations.slice(0, -1))
      await cp(join(MIGRATIONS_DIR, name), join(older, name), { recursive: true });
    const stale = await prepareTemplate(older);
    try {
      const template = await prepareTemplate();
      expect(stale).toBeDefined();
      expect(stale).not.toBe(template);
      const begun = new Date();
      const dir = join(privateDir, 'migrated');
      const run = await runSpool(['chat'], { env: { ...env, DATA_DIR: dir }, input: 'hello\n' });
      expect(run.stdout).toBe('you said: hello\n');
      expect(systemId(join(dir, 'postgres'))).toBe(systemId(template!));
      expect(systemId(join(dir, 'postgres'))).not.toBe(systemId(stale!));
      // All of them, each applied before this start: none by it.
      const server = await startEmbeddedPostgres(dir);
      const client = new pg.Client({ connectionString: server.url });
      try {
        await client.connect();
        const { rows } = await client.query<{ migration_name: string; finished_at: Date }>(
          'SELECT migration_name, finished_at FROM "_prisma_migrations" ORDER BY migration_name',
        );
        expect(rows.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
        for (const row of rows) expect(row.finished_at.getTime()).toBeLessThan(begun.getTime());
      } finally {
        await client.end();
        await server.stop();
      }
    } finally {
      if (stale) await rm(stale, { recursive: true, force: true });
    }
  });
});

describe('a server that cannot start', () => {
  it('fails the start with the last lines the server wrote', async () => {
    const broken = join(privateDir, 'broken');
    const server = await startEmbeddedPostgres(broken);
    await server.stop();
    await appendFile(join(broken, 'postgres', 'postgresql.conf'), '\nshared_buffers = nonsense\n');
    await expect(startEmbeddedPostgres(broken)).rejects.toThrow(
      /PostgreSQL exited \(code 1\) before it was ready: [^]*shared_buffers/,
    );
    expect(await server.running()).toBe(false);
  });
});
