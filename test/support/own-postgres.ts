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
  /**
   * SIGSTOP to the postmaster and then to every process it started (backends, walwriter,
   * checkpointer…): the whole server stalls, connections open and statements unanswered, as a VM
   * paused or a failover under way. Resolves with the processes it stopped.
   */
  pause(): Promise<number[]>;
  /** SIGCONT to what `pause` stopped (and to any child of the postmaster, stopped or not). */
  resume(): Promise<void>;
  remove(): Promise<void>;
}

/** PostgreSQL refuses to run as root: as root, its binaries run as the "postgres" user. */
async function serverUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout);
  return { uid: await id('-u'), gid: await id('-g') };
}

/** The processes whose parent is `pid`, as /proc tells them. */
async function childrenOf(pid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }), // ps exits 1 with none
  );
  return stdout
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
}

/** initdb and pg_ctl on a temp dir and a free port, listening on 127.0.0.1 only. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-own-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const as = await serverUser();
  if (as.uid !== undefined) await chown(dir, as.uid, as.gid!);
  const pgCtl = (args: string[]) => run(join(BIN, 'pg_ctl'), ['-D', data, ...args], as);
  // --no-sync: initdb's fsync of each file guards a cluster against the machine's crash, which a
  // test's server never outlives (its kills and stops leave the OS's cache in place); it was half
  // of initdb's 0.9 s here, and the server's own writes are synced as ever.
  await run(
    join(BIN, 'initdb'),
    ['-D', data, '--auth=trust', '--username=postgres', '--no-instructions', '--no-sync'],
    as,
  );
  const postmaster = async () =>
    Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  let paused: number[] = [];
  const signal = (pids: number[], name: NodeJS.Signals) => {
    for (const pid of pids)
      try {
        process.kill(pid, name);
      } catch {
        // gone meanwhile (a backend whose client left)
      }
  };
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
      process.kill(await postmaster(), 'SIGKILL');
      await until(
        () =>
          pgCtl(['status']).then(
            () => undefined,
            () => true,
          ),
        30_000,
      );
    },
    async pause() {
      // The postmaster first: stopped, it forks no new backend while its children are listed.
      const pid = await postmaster();
      process.kill(pid, 'SIGSTOP');
      const children = await childrenOf(pid);
      signal(children, 'SIGSTOP');
      paused = [pid, ...children];
      return paused;
    },
    async resume() {
      const pid = await postmaster();
      const all = [...new Set([...(await childrenOf(pid)), ...paused.filter((p) => p !== pid)])];
      signal(all, 'SIGCONT');
      signal([pid], 'SIGCONT');
      paused = [];
    },
    async remove() {
      if (paused.length > 0) await server.resume().catch(() => {});
      await server.stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
