import { execFile } from 'node:child_process';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, until } from './process.ts';

const run = promisify(execFile);
/** Debian's PostgreSQL 15, the server the machine runs: its binaries, never its cluster. */
const BIN = '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL server of a test's own, to stop, kill and start again: the machine's shared one is
 * never touched.
 */
export interface OwnPostgres {
  url: string;
  start(): Promise<void>;
  /**
   * `pg_ctl stop`: `immediate` is a crash for the clients (no shutdown checkpoint), `fast` a clean
   * stop.
   */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** SIGKILL to the postmaster, and waits until it is gone. */
  kill(): Promise<void>;
  remove(): Promise<void>;
}

/** PostgreSQL refuses to run as root: as root, its binaries run as the "postgres" user. */
async function serverUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout);
  return { uid: await id('-u'), gid: await id('-g') };
}

/** initdb and pg_ctl on a temp dir and a free port, listening on 127.0.0.1 only. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-own-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const as = await serverUser();
  if (as.uid !== undefined) await chown(dir, as.uid, as.gid!);
  const pgCtl = (args: string[]) => run(join(BIN, 'pg_ctl'), ['-D', data, ...args], as);
  await run(
    join(BIN, 'initdb'),
    ['-D', data, '--auth=trust', '--username=postgres', '--no-instructions'],
    as,
  );
  const server: OwnPostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    // After a kill, the old backends may still hold shared memory for a moment: start retries.
    start: () =>
      until(
        () =>
          pgCtl([
            'start',
            '-w',
            '-l',
            join(dir, 'server.log'),
            '-o',
            `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
          ]).then(
            () => true,
            () => undefined,
          ),
        30_000,
      ).then(() => {}),
    stop: async (mode = 'fast') => void (await pgCtl(['stop', '-w', '-m', mode])),
    async kill() {
      const pid = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      await until(
        () =>
          pgCtl(['status']).then(
            () => undefined,
            () => true,
          ),
        30_000,
      );
    },
    async remove() {
      await server.stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
