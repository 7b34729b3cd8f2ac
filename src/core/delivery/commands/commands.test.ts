import { describe, expect, it, vi } from 'vitest';
import { NotRecordedError } from '../../ports/platform/delivery.ts';
import { StoreError } from '../../ports/store.ts';
import { commandFailureReply, DATABASE_AWAY_REPLY, sayingSlow, storeRead } from './commands.ts';
import { FAILURE_REPLY, NOT_RECORDED_REPLY } from '../engine/engine.ts';

const never = () => new Promise<never>(() => {});

describe('a command that reads the database', () => {
  it('fails as a StoreError, worded for the person as the database not answering', async () => {
    const failed = storeRead('usage', () => Promise.reject(new Error('connect ECONNREFUSED')));
    await expect(failed).rejects.toThrow(StoreError);
    await expect(failed).rejects.toThrow('usage: connect ECONNREFUSED');
    expect(commandFailureReply(await failed.catch((error: unknown) => error))).toBe(
      DATABASE_AWAY_REPLY,
    );
  });

  it('gives up on a database that never answers, after the time it is given', async () => {
    vi.useFakeTimers();
    try {
      let settled = false;
      const outcome = storeRead('recall', never, 10_000).catch((error: unknown) => {
        settled = true;
        return error;
      });
      await vi.advanceTimersByTimeAsync(9_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(StoreError);
      expect(errorText(error)).toBe('recall: the database did not answer within 10000 ms');
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers what the database answered', async () => {
    await expect(storeRead('result', () => Promise.resolve('found'))).resolves.toBe('found');
  });
});

const errorText = (error: unknown) => (error as Error).message;

describe('commandFailureReply', () => {
  it('says what happened: not stored, the database away, or something else', () => {
    expect(commandFailureReply(new NotRecordedError('x'))).toBe(NOT_RECORDED_REPLY);
    expect(commandFailureReply(new StoreError('x'))).toBe(DATABASE_AWAY_REPLY);
    expect(commandFailureReply(new Error('a bug'))).toBe(FAILURE_REPLY);
  });
});

describe('sayingSlow', () => {
  it('says "slow" once the work outlasts the time, and still gives its result', async () => {
    vi.useFakeTimers();
    try {
      let finish!: (value: string) => void;
      const slow = vi.fn(() => Promise.resolve());
      const result = sayingSlow(new Promise<string>((resolve) => (finish = resolve)), 2_000, slow);
      await vi.advanceTimersByTimeAsync(1_999);
      expect(slow).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(slow).toHaveBeenCalledOnce();
      finish('done');
      await expect(result).resolves.toBe('done');
    } finally {
      vi.useRealTimers();
    }
  });

  it('says nothing of work done in time', async () => {
    const slow = vi.fn(() => Promise.resolve());
    await expect(sayingSlow(Promise.resolve(1), 2_000, slow)).resolves.toBe(1);
    expect(slow).not.toHaveBeenCalled();
  });
});
