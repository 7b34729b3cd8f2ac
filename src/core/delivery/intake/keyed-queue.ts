/**
 * Runs tasks with the same key one at a time, in the order they were queued; tasks with
 * different keys run concurrently. The delivery engine records a lane's messages this way, so two
 * that
 * arrive in order (one gateway stream, one thread) reach the inbox in that order, while other
 * lanes do not wait for them.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    // The caller gets `result` and its failure; the queue only needs to know when it settled.
    const tail = result.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
