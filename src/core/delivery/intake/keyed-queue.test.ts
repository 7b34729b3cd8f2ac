import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('KeyedQueue', () => {
  it('runs one key in order and different keys concurrently', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      queue.run('a', task('a1', 30)),
      queue.run('a', task('a2', 1)),
      queue.run('b', task('b1', 5)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    await sleep(1);
    expect(queue.size).toBe(0);
  });

  it('keeps going after a task fails', async () => {
    const queue = new KeyedQueue();
    await expect(queue.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(await queue.run('a', async () => 'next')).toBe('next');
  });
});
