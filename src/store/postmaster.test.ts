import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postmasterRunning, readyPostmaster } from './postmaster.ts';

/** A pid file as PostgreSQL 18 writes it, with its status line. */
const pidFile = (pid: string, status: string) =>
  `${pid}\n/data/postgres\n1764325000\n5432\n.\n\n  1234567  32768\n${status}\n`;

describe('readyPostmaster', () => {
  it('names the pid once the status line says ready', () => {
    expect(readyPostmaster(pidFile('4242', 'ready   '))).toBe(4242);
  });

  it('names none while the server starts, stops or is a standby, nor from a pid file cut short', () => {
    expect(readyPostmaster(pidFile('4242', 'starting'))).toBeUndefined();
    expect(readyPostmaster(pidFile('4242', 'stopping'))).toBeUndefined();
    expect(readyPostmaster(pidFile('4242', 'standby '))).toBeUndefined();
    expect(readyPostmaster('4242\n/data/postgres\n1764325000\n')).toBeUndefined();
    expect(readyPostmaster('')).toBeUndefined();
  });

  it('names none when the first line is not a pid', () => {
    expect(readyPostmaster(pidFile('', 'ready   '))).toBeUndefined();
    expect(readyPostmaster(pidFile('-1', 'ready   '))).toBeUndefined();
    expect(readyPostmaster(pidFile('12a', 'ready   '))).toBeUndefined();
  });
});

describe('postmasterRunning', () => {
  let pgdata: string;
  const live = spawn('sleep', ['600']);
  beforeAll(async () => (pgdata = await mkdtemp(join(tmpdir(), 'spool-postmaster-'))));
  afterAll(async () => {
    live.kill();
    await rm(pgdata, { recursive: true, force: true });
  });
  const runningWith = async (pid: string, uid?: number) => {
    await writeFile(join(pgdata, 'postmaster.pid'), pidFile(pid, 'ready   '));
    return postmasterRunning(pgdata, uid);
  };

  it("says a live pid runs, and under root only when it is the server user's", async () => {
    const uid = process.getuid!();
    expect(await runningWith(String(live.pid))).toBe(true);
    expect(await runningWith(String(live.pid), uid)).toBe(true);
    expect(await runningWith(String(live.pid), uid + 1)).toBe(false);
  });

  it("says none runs for an exited pid, its own, its parent's, a garbled file or none", async () => {
    const exited = spawn('true');
    await new Promise((resolve) => exited.once('exit', resolve));
    expect(await runningWith(String(exited.pid))).toBe(false);
    expect(await runningWith(String(process.pid))).toBe(false);
    expect(await runningWith(String(process.ppid))).toBe(false);
    expect(await runningWith('x')).toBe(false);
    await rm(join(pgdata, 'postmaster.pid'));
    expect(await postmasterRunning(pgdata)).toBe(false);
  });
});
