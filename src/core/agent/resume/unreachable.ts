import { StoreUnavailableError } from '../../ports/store.ts';

/** How long a turn waits for a database it cannot reach before it gives the attempt up. */
export const UNREACHABLE_WAIT_MS = 120_000;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * A write made again while the database cannot be reached (`StoreUnavailableError`: nothing of it
 * was sent), until `waitMs` has passed or the turn is stopped: a turn that holds a model's answer
 * waits out a stall or a failover instead of asking the model again once the message is retried.
 * Any other failure, and one past the wait, is the caller's.
 */
export async function whileUnreachable<T>(
  write: () => Promise<T>,
  signal: AbortSignal,
  waitMs = UNREACHABLE_WAIT_MS,
): Promise<T> {
  const started = Date.now();
  for (let pauseMs = 250; ; pauseMs = Math.min(pauseMs * 2, 4_000)) {
    try {
      return await write();
    } catch (error) {
      const giveUp = signal.aborted || Date.now() - started >= waitMs;
      if (!(error instanceof StoreUnavailableError) || giveUp) throw error;
      await pause(pauseMs, signal);
    }
  }
}
