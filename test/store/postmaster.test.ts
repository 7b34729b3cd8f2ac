import { describe, expect, it } from 'vitest';
import { readyPostmaster } from '../../src/store/postmaster.ts';

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
