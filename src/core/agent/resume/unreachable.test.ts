import { describe, expect, it, vi } from 'vitest';
import { StoreError, StoreUnavailableError } from '../../ports/store.ts';
import { whileUnreachable } from './unreachable.ts';

/** A write that fails with each of `failures` in turn, then succeeds; counts its calls. */
function flaky(failures: Error[]) {
  let calls = 0;
  return {
    calls: () => calls,
    write: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return 'written';
    },
  };
}

describe('whileUnreachable', () => {
  const never = new AbortController().signal;

  it('makes the write again while the database cannot be reached, then returns what it wrote', async () => {
    const write = flaky([new StoreUnavailableError('away'), new StoreUnavailableError('away')]);
    expect(await whileUnreachable(write.write, never)).toBe('written');
    expect(write.calls()).toBe(3);
  });

  it('leaves any other failure to the caller at once', async () => {
    const write = flaky([new StoreError('refused')]);
    await expect(whileUnreachable(write.write, never)).rejects.toThrow('refused');
    expect(write.calls()).toBe(1);
  });

  it('gives up once the wait has passed, or the turn is stopped', async () => {
    const away = () => [1, 2, 3, 4, 5].map(() => new StoreUnavailableError('away'));
    const late = flaky(away());
    await expect(whileUnreachable(late.write, never, 0)).rejects.toThrow(StoreUnavailableError);
    expect(late.calls()).toBe(1);
    const stop = new AbortController();
    const stopped = flaky(away());
    // Stopped while it waits after the first failure (the stop comes as a task of its own, after
    // the failure is handled): the wait ends at once, not after its 250 ms, and the write made
    // again is the last.
    vi.useFakeTimers();
    try {
      const write = () => {
        if (stopped.calls() === 0) setTimeout(() => stop.abort());
        return stopped.write();
      };
      const waiting = whileUnreachable(write, stop.signal).catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(0);
      expect(await waiting).toBeInstanceOf(StoreUnavailableError);
    } finally {
      vi.useRealTimers();
    }
    expect(stopped.calls()).toBe(2);
  });
});
