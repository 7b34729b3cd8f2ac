import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A process as /proc shows it: its state (R, S, Z for a zombie…) and when it started (field 22).
 * Undefined without /proc.
 */
async function procStat(pid: number): Promise<{ state: string; started: string } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, started: fields[19]! };
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote `lock` ("pid start-time") still runs, and is not just another
 * process with its pid.
 */
async function holderRuns(lock: string): Promise<number | undefined> {
  const [pidText = '', started = ''] = lock.trim().split(' ');
  const pid = Number(pidText);
  if (!pid || pid === process.pid || !isAlive(pid)) return undefined;
  const now = await procStat(pid);
  // A zombie has exited; its parent just has not reaped it yet (an init that reaps late, a
  // container without --init).
  if (now?.state === 'Z' || now?.state === 'X') return undefined;
  // Containers reuse small pids: a live process is the holder only if it started when the holder
  // did.
  return started && now !== undefined && now.started !== started ? undefined : pid;
}

/**
 * Claims the embedded database's directory for this process. PostgreSQL locks its data directory
 * itself, but a second Spool would adopt the first one's server and share its leases. A lock left
 * by a dead process (a zombie included), or by one whose pid is now another process's, is taken
 * over.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'spool.lock');
  const mine = `${process.pid} ${(await procStat(process.pid))?.started ?? ''}`.trim();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(path, mine, { flag: 'wx' });
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await holderRuns(await readFile(path, 'utf8').catch(() => ''));
      if (holder)
        throw new DataDirLockedError(
          `Another Spool process (pid ${holder}) is using ${dir}. Stop it, or set DATA_DIR or DATABASE_URL.`,
        );
      await rm(path, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock ${dir}`);
}
