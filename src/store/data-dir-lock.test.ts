import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.ts';

const stat = async (pid: number) => {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, started: fields[19]! };
};

let dir: string;
const children: Array<{ kill(): void }> = [];
afterEach(async () => {
  children.splice(0).forEach((c) => c.kill());
  await rm(dir, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('takes over a lock whose holder is a zombie: dead, but not yet reaped by its parent', async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-lock-'));
    // The child exits once its parent has become `sleep`, which never reaps it: a zombie while
    // sleep runs.
    const parent = spawn('sh', ['-c', 'sleep 0.5 & echo $!; exec sleep 60']);
    children.push(parent);
    const pid = Number(
      await new Promise<string>((resolve) =>
        parent.stdout.once('data', (d: Buffer) => resolve(d.toString())),
      ),
    );
    for (let i = 0; (await stat(pid)).state !== 'Z'; i++) {
      expect(i).toBeLessThan(1_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await writeFile(join(dir, 'spool.lock'), `${pid} ${(await stat(pid)).started}`);

    const unlock = await lockDataDir(dir);
    expect((await readFile(join(dir, 'spool.lock'), 'utf8')).split(' ')[0]).toBe(
      String(process.pid),
    );
    await unlock();
  });

  it('refuses a lock whose holder runs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-lock-'));
    const holder = spawn('sleep', ['60']);
    children.push(holder);
    await writeFile(join(dir, 'spool.lock'), `${holder.pid} ${(await stat(holder.pid!)).started}`);
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirLockedError);
  });
});
