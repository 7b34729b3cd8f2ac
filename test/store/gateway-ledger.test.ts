import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { GatewayLedger } from '../../src/store/delivery/gateway-ledger.ts';
import { testDatabase } from '../support/db.ts';
import { until } from '../support/process.ts';

/** Discord's gateway shared through the database: the count's fence, shard leases, sessions, identifies. */
let db: Database;
let ledger: GatewayLedger;
const LIMIT = { total: 1000, remaining: 1000, resetAfterMs: 3_600_000, maxConcurrency: 1 };
const LEASE_MS = 60_000;
/** Between two identifies of a bucket: Discord's is 5 s, settings make it shorter in tests. */
const SPACING_MS = 1_000;

const identifiesLeft = async (app: string) =>
  (
    await db.prisma.$queryRaw<Array<{ identifies_left: number }>>`
      SELECT identifies_left FROM discord_gateways WHERE application_id = ${app}`
  )[0]?.identifies_left;

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
    const turn = (bucket: number) => ledger.identifyTurn(app, bucket, SPACING_MS, 1);
    const first = await turn(0);
    const second = await turn(0);
    // The second is told what is left of the first's spacing: less only by the time between.
    const between = Date.now() - firstAt;
    const otherBucket = await turn(1);
    expect(first).toEqual({ identify: true });
    expect('busyMs' in second && second.busyMs).toBeGreaterThanOrEqual(SPACING_MS - between - 1);
    expect('busyMs' in second && second.busyMs).toBeLessThanOrEqual(SPACING_MS);
    expect(otherBucket).toEqual({ identify: true });
    // Asked while busy, nothing of the day's is spent: 2 of 4 taken.
    expect(await identifiesLeft(app)).toBe(2);
    /** The bucket's turn once it is free: asked again as long as it is busy, as a shard does. */
    const once = (bucket: number) =>
      until(async () => {
        const asked = await turn(bucket);
        return 'busyMs' in asked ? undefined : asked;
      });
    expect(await once(0)).toEqual({ identify: true });
    // 4 remaining, margin 1: the fourth is refused, until the day's reset.
    const refused = await once(1);
    expect(refused).toMatchObject({ keptBack: true });
    expect('retryAfterMs' in refused && refused.retryAfterMs).toBeGreaterThan(3_500_000);
    expect(await identifiesLeft(app)).toBe(1);
  });

  it('lets one of many replicas asking at once take a bucket, and spends one of the day’s', async () => {
    const app = randomUUID();
    await ledger.settle(app, 1, LIMIT);
    const ledgers = Array.from({ length: 8 }, () => new GatewayLedger(db));
    const turns = await Promise.all(ledgers.map((l) => l.identifyTurn(app, 0, SPACING_MS, 1)));
    expect(turns.filter((t) => 'identify' in t)).toHaveLength(1);
    expect(turns.filter((t) => 'busyMs' in t)).toHaveLength(7);
    expect(await identifiesLeft(app)).toBe(LIMIT.remaining - 1);
  });
});
