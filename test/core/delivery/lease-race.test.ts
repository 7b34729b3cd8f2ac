import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lanes } from '../../../src/core/delivery/engine/lanes.ts';
import type { PendingEntry } from '../../../src/core/ports/platform/delivery.ts';
import type { Database } from '../../../src/store/database.ts';
import { DeliveryLedger } from '../../../src/store/delivery/delivery-ledger.ts';
import { testDatabase, uniqueKey } from '../../support/db.ts';
import { silentLogger } from '../../support/logger.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

let db: Database;
let ledger: DeliveryLedger;
/** A connection of the test's own, to hold a lane's row while a renewal runs. */
let client: pg.Client;

beforeAll(async () => {
  db = await testDatabase();
  ledger = new DeliveryLedger(db);
  client = new pg.Client({ connectionString: fileDatabaseUrl() });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await db.close();
});

const record = async () =>
  (await ledger.record(
    {
      lane: uniqueKey(),
      messageKey: randomUUID(),
      kind: 'message',
      user: 'U1',
      text: 'hello',
      delivery: {},
    },
    false,
  ))!;

/** Renewals waiting for a row lock now: a renewal that has taken its snapshot and is held up. */
async function blockedRenewals(): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
        AND query LIKE '%UPDATE lanes SET lease_expires_at%'`,
  );
  return rows[0]!.n;
}

it('does not abort the work of a lane acquired while a renewal was in flight', async () => {
  const [x, y] = [await record(), await record()];
  // Each message's work runs until the lanes stop (or abort it): its signal says whether it was.
  const working = new Map<string, AbortSignal>();
  const answer = (entry: PendingEntry, signal: AbortSignal) =>
    new Promise<boolean>((resolve) => {
      working.set(entry.laneId, signal);
      signal.addEventListener('abort', () => resolve(false));
    });
  const renewals: Array<{ done: boolean }> = [];
  const lanes = new Lanes(
    {
      ledger: {
        claimableLanes: (...args) => ledger.claimableLanes(...args),
        acquire: (...args) => ledger.acquire(...args),
        release: (...args) => ledger.release(...args),
        nextPending: (...args) => ledger.nextPending(...args),
        renew: (...args) => {
          const renewal = { done: false };
          renewals.push(renewal);
          return ledger.renew(...args).finally(() => (renewal.done = true));
        },
      },
      logger: silentLogger,
      // Only the lanes this test hands over are worked.
      platforms: () => [],
      answer,
    },
    // A heartbeat every 200 ms.
    { holder: `race-${randomUUID()}`, leaseMs: 600, pollMs: 60_000 },
  );
  const state = (signal: AbortSignal) => (signal.aborted ? String(signal.reason) : 'working');
  /** Waits for a renewal that starts from now on to answer. */
  const nextRenewal = async () => {
    const from = renewals.length;
    await expect
      .poll(() => renewals.length > from && renewals[from]!.done, { timeout: 10_000 })
      .toBe(true);
  };
  lanes.start();
  try {
    lanes.work(x.laneId);
    await expect.poll(() => working.has(x.laneId)).toBe(true);
    await nextRenewal();
    expect(state(working.get(x.laneId)!)).toBe('working');
    // Lane x's row is held, so the next renewal takes its snapshot and then waits for it...
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM lanes WHERE id = $1 FOR UPDATE', [x.laneId]);
    await expect.poll(blockedRenewals, { timeout: 10_000 }).toBeGreaterThan(0);
    // ...while lane y is acquired, and its work starts.
    lanes.work(y.laneId);
    await expect.poll(() => working.has(y.laneId)).toBe(true);
    const inFlight = renewals.slice();
    await client.query('ROLLBACK');
    // Every renewal that was in flight has answered, and one more started after them too.
    await expect.poll(() => inFlight.every((r) => r.done), { timeout: 10_000 }).toBe(true);
    await nextRenewal();
    expect(state(working.get(y.laneId)!)).toBe('working');
    expect(state(working.get(x.laneId)!)).toBe('working');
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    await lanes.stop(0);
  }
});

it('keeps working through a heartbeat that fails past the lease, when no one took the lane', async () => {
  const entry = await record();
  const holder = `stalled-${randomUUID()}`;
  const working = new Map<string, AbortSignal>();
  let down = false;
  const renewals: Array<{ failed: boolean; renewed: number; at: number }> = [];
  const acquired: unknown[] = [];
  const lanes = new Lanes(
    {
      ledger: {
        claimableLanes: (...args) => ledger.claimableLanes(...args),
        acquire: async (...args) => {
          const lease = await ledger.acquire(...args);
          acquired.push(lease);
          return lease;
        },
        release: (...args) => ledger.release(...args),
        nextPending: (...args) => ledger.nextPending(...args),
        // The database away for the heartbeat: its renewals fail.
        renew: async (...args) => {
          if (down) {
            renewals.push({ failed: true, renewed: 0, at: Date.now() });
            throw new Error('connection refused');
          }
          const renewed = await ledger.renew(...args);
          renewals.push({ failed: false, renewed: renewed.length, at: Date.now() });
          return renewed;
        },
      },
      logger: silentLogger,
      platforms: () => [],
      answer: (pending, signal) =>
        new Promise<boolean>((resolve) => {
          working.set(pending.laneId, signal);
          signal.addEventListener('abort', () => resolve(false));
        }),
    },
    { holder, leaseMs: 300, pollMs: 60_000 },
  );
  lanes.start();
  try {
    lanes.work(entry.laneId);
    await expect.poll(() => working.has(entry.laneId)).toBe(true);
    down = true;
    // The lease runs out on the database's clock, and a heartbeat fails after that.
    await expect
      .poll(async () => (await ledger.claimableLanes(['test'], 100_000)).includes(entry.laneId), {
        timeout: 10_000,
      })
      .toBe(true);
    // Heartbeats go on failing for a whole lease more (unless the work is stopped).
    const expired = Date.now();
    const signal = working.get(entry.laneId)!;
    await expect
      .poll(() => signal.aborted || renewals.some((r) => r.failed && r.at > expired + 300))
      .toBe(true);
    const state = (signal: AbortSignal) => (signal.aborted ? String(signal.reason) : 'working');
    expect(state(working.get(entry.laneId)!)).toBe('working');
    down = false;
    const back = renewals.length;
    await expect
      .poll(() => renewals.slice(back).some((r) => !r.failed && r.renewed === 1), {
        timeout: 10_000,
      })
      .toBe(true);
    expect(state(working.get(entry.laneId)!)).toBe('working');
    // Renewed under the same generation: the lease is this holder's again.
    expect(
      (
        await client.query(
          'SELECT holder, generation::text, lease_expires_at > now() AS live FROM lanes WHERE id = $1',
          [entry.laneId],
        )
      ).rows,
    ).toEqual([
      { holder, generation: (acquired[0] as { generation: string }).generation, live: true },
    ]);
  } finally {
    await lanes.stop(0);
  }
});
