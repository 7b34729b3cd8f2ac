import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { GatewayLedger } from '../../src/store/delivery/gateway-ledger.ts';
import { testDatabase } from '../support/db.ts';

/** Discord's gateway shared through the database: the count's fence, shard leases, sessions, identifies. */
let db: Database;
let ledger: GatewayLedger;
const LIMIT = { total: 1000, remaining: 1000, resetAfterMs: 3_600_000, maxConcurrency: 1 };
const LEASE_MS = 60_000;

beforeAll(async () => {
  db = await testDatabase();
  ledger = new GatewayLedger(db);
});
afterAll(async () => {
  await db.close();
});

describe('GatewayLedger', () => {
  it('changes the count in one fenced step: the old generation renews no more, the new one waits for it to let go', async () => {
    const app = randomUUID();
    const four = await ledger.settle(app, 4, LIMIT);
    expect(await ledger.settle(app, 4, LIMIT)).toEqual(four);
    const old = (await ledger.acquire(app, four, 1, 'a', LEASE_MS))!;
    expect(old.shardId).toBe(1);
    expect(await ledger.acquire(app, four, 1, 'b', LEASE_MS)).toBeUndefined();

    const eight = await ledger.settle(app, 8, LIMIT);
    expect(eight).toMatchObject({ shardCount: 8, generation: String(Number(four.generation) + 1) });
    // The old generation's lease is still live: no shard of the new one connects beside it.
    expect(await ledger.acquire(app, eight, 3, 'b', LEASE_MS)).toBeUndefined();
    expect((await ledger.look(app, 'b', LEASE_MS)).olderLive).toBe(true);
    // Its holder's next renewal fails: it closes the connection and lets go.
    expect(await ledger.renew(app, 'a', [{ lease: old }], LEASE_MS)).toEqual([]);
    // Nor can a shard of the old count be taken any more.
    expect(await ledger.acquire(app, four, 2, 'b', LEASE_MS)).toBeUndefined();
    await ledger.release(old, 'a');
    const taken = await ledger.acquire(app, eight, 3, 'b', LEASE_MS);
    expect(taken).toMatchObject({ shardId: 3, takenOver: false });
    const view = await ledger.look(app, 'b', LEASE_MS);
    expect(view.olderLive).toBe(false);
    expect([...view.holders]).toEqual([[3, 'b']]);
  });

  it('keeps a shard’s session with its lease: a stale holder writes nothing, the taker reads it', async () => {
    const app = randomUUID();
    const gateway = await ledger.settle(app, 1, LIMIT);
    const first = (await ledger.acquire(app, gateway, 0, 'a', 1))!;
    const session = { sessionId: 's-1', sequence: 7, resumeUrl: 'wss://resume', shardCount: 1 };
    await ledger.keepSession(first, session);
    expect(await ledger.renew(app, 'a', [{ lease: first, sequence: 42 }], 1)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 10));
    const taker = (await ledger.acquire(app, gateway, 0, 'b', LEASE_MS))!;
    expect(taker.takenOver).toBe(true);
    expect(await ledger.session(taker)).toEqual({ ...session, sequence: 42 });
    // The old holder's late write is refused by the generation.
    await ledger.keepSession(first, { ...session, sessionId: 's-stale' });
    await ledger.keepSession(first, undefined);
    expect((await ledger.session(taker))?.sessionId).toBe('s-1');
    expect(await ledger.renew(app, 'a', [{ lease: first }], LEASE_MS)).toEqual([]);
  });

  it('spaces a bucket’s identifies, keeps buckets apart, and refuses past the margin until the reset', async () => {
    const app = randomUUID();
    await ledger.settle(app, 4, { ...LIMIT, remaining: 4, maxConcurrency: 2 });
    const firstAt = Date.now();
    const first = await ledger.identifyTurn(app, 0, 5_000, 1);
    const second = await ledger.identifyTurn(app, 0, 5_000, 1);
    // The second waits out what is left of the first's 5 s: less only by the time between them.
    const between = Date.now() - firstAt;
    const otherBucket = await ledger.identifyTurn(app, 1, 5_000, 1);
    expect(first).toEqual({ waitMs: 0 });
    expect('waitMs' in second && second.waitMs).toBeGreaterThanOrEqual(5_000 - between - 1);
    expect('waitMs' in second && second.waitMs).toBeLessThanOrEqual(5_000);
    expect(otherBucket).toEqual({ waitMs: 0 });
    // 4 remaining, margin 1: the fourth is refused, until the day's reset.
    const refused = await ledger.identifyTurn(app, 1, 5_000, 1);
    expect(refused).toMatchObject({ keptBack: true });
    expect('retryAfterMs' in refused && refused.retryAfterMs).toBeGreaterThan(3_500_000);
  });
});
