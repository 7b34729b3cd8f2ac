/**
 * Group commit: writes that arrive while the database is busy with earlier ones share the next
 * statement, so a burst of turns costs a few round trips instead of one each, and an idle store
 * waits for nothing. Every caller still waits for its own write. A failed batch is written again
 * one item at a time, so that one bad item fails only its own caller.
 */
export class GroupCommit<T> {
  private queue: Array<{ item: T; done: (error?: unknown) => void }> = [];
  private inFlight = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly options: { inFlight: number; maxBatch: number },
  ) {}

  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, done: (error) => (error === undefined ? resolve() : reject(error)) });
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.inFlight) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async writeBatch(batch: GroupCommit<T>['queue']): Promise<void> {
    try {
      await this.write(batch.map((b) => b.item));
      for (const b of batch) b.done();
    } catch (error) {
      if (batch.length === 1) return batch[0]!.done(error ?? new Error('write failed'));
      for (const b of batch)
        await this.write([b.item]).then(
          () => b.done(),
          (alone: unknown) => b.done(alone ?? new Error('write failed')),
        );
    }
  }
}
