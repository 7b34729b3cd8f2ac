import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

/** A write the test completes by hand, so what is in flight at each moment is known. */
function heldWrites() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const write = (items: number[]) => {
    batches.push(items);
    return new Promise<void>((resolve, reject) =>
      pending.push(() => (items.includes(13) ? reject(new Error('bad item')) : resolve())),
    );
  };
  return { batches, write, finishNext: () => pending.shift()!() };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes alone when idle, and batches what arrives while the in-flight slots are busy', async () => {
    const held = heldWrites();
    const commit = new GroupCommit(held.write, { inFlight: 1, maxBatch: 3 });
    const done: number[] = [];
    const submit = (n: number) => commit.submit(n).then(() => done.push(n));
    const writes = [submit(1), submit(2), submit(3), submit(4), submit(5)];
    expect(held.batches).toEqual([[1]]);
    held.finishNext();
    await settled();
    // Each caller waits for its own write, and no longer.
    expect(done).toEqual([1]);
    expect(held.batches).toEqual([[1], [2, 3, 4]]);
    held.finishNext();
    await settled();
    expect(done).toEqual([1, 2, 3, 4]);
    held.finishNext();
    await Promise.all(writes);
    expect(held.batches).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('fails only the caller whose item broke a batch', async () => {
    const held = heldWrites();
    const commit = new GroupCommit(held.write, { inFlight: 1, maxBatch: 10 });
    const first = commit.submit(1);
    const outcomes = Promise.allSettled([commit.submit(12), commit.submit(13), commit.submit(14)]);
    held.finishNext();
    await first;
    await settled();
    held.finishNext(); // the batch [12, 13, 14] fails, and each is written again alone
    for (let i = 0; i < 3; i++) {
      await settled();
      held.finishNext();
    }
    expect((await outcomes).map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(held.batches).toEqual([[1], [12, 13, 14], [12], [13], [14]]);
  });
});
