import { spawn } from 'node:child_process';
import { closeSync, fchownSync, openSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often the pid file is read while the server starts: `pg_ctl -w` reads it every 100 ms. */
const POLL_MS = 5;

/**
 * The postmaster's pid when its pid file (`postmaster.pid`) says it accepts connections; undefined
 * while it starts, stops, or the file is partly written. Its lines: the pid, the data directory,
 * the start time, the port, the socket directory, the listen address, the shared memory key, the
 * status (PostgreSQL's `LOCK_FILE_LINE_*`).
 */
export function readyPostmaster(pidFile: string): number | undefined {
  const lines = pidFile.split('\n');
  const pid = Number(lines[0]);
  return Number.isInteger(pid) && pid > 0 && lines[7]?.trim() === 'ready' ? pid : undefined;
}

/** What the server wrote last, for the error of a start that failed. */
async function logTail(log: string): Promise<string> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-3).join('\n');
}

/**
 * Starts `postgres` on `pgdata` as `pg_ctl start -w` does (in a session of its own, so that neither
 * a Ctrl-C nor Spool's end reaches it; its output appended to `server.log`; stdin closed), and
 * resolves once its pid file says it is ready. `pg_ctl -w` checks that file every 100 ms, which
 * a warm start waited for whole: it is checked here every few milliseconds. Rejects when the server
 * exits first, with the last lines of its log, or is not ready within `timeoutMs`.
 */
export async function startPostmaster(
  postgres: string,
  pgdata: string,
  as: { uid?: number; gid?: number; env: NodeJS.ProcessEnv },
  timeoutMs: number,
): Promise<void> {
  const log = join(pgdata, 'server.log');
  const out = openSync(log, 'a', 0o600);
  if (as.uid !== undefined) fchownSync(out, as.uid, as.gid!);
  const child = spawn(postgres, ['-D', pgdata], {
    ...as,
    detached: true,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  child.unref();
  let exited: string | undefined;
  const onExit = (code: number | null, signal: string | null) =>
    (exited = signal ? `signal ${signal}` : `code ${String(code)}`);
  child.once('exit', onExit);
  child.once('error', (error) => (exited = error.message));
  try {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(POLL_MS)) {
      if (exited !== undefined)
        throw new Error(`PostgreSQL exited (${exited}) before it was ready: ${await logTail(log)}`);
      const pidFile = await readFile(join(pgdata, 'postmaster.pid'), 'utf8').catch(() => '');
      if (readyPostmaster(pidFile) === child.pid) return;
    }
    throw new Error(`PostgreSQL was not ready within ${timeoutMs / 1000} s: ${await logTail(log)}`);
  } finally {
    child.off('exit', onExit);
  }
}

/**
 * Whether the postmaster named in `pgdata`'s pid file runs, as `pg_ctl status` would say, without
 * starting a process (a spawn costs a start 10-50 ms, more under load): the pid is alive and, under
 * root, the server user's (`uid`), since pg_ctl, run as that user, can signal no one else's.
 */
export async function postmasterRunning(pgdata: string, uid?: number): Promise<boolean> {
  const pidFile = await readFile(join(pgdata, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(pidFile.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || pid === process.ppid)
    return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // Without /proc, a live pid is all pg_ctl would know too.
  return (
    uid === undefined ||
    (await stat(`/proc/${pid}`).then(
      (s) => s.uid === uid,
      () => true,
    ))
  );
}
