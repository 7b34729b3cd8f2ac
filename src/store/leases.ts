import type pg from 'pg';
import type { AcquiredLease } from '../core/ports/platform/delivery.ts';
import { LeaseLostError, type Lease } from '../core/ports/store.ts';
import { Prisma } from './generated/client.ts';
import { queryOnPool, runOnPool } from './pool-statement.ts';

/**
 * The lease statements on `lanes` rows, shared by every holder of a lane: a message lane's
 * (DeliveryLedger) and a gateway shard's (GatewayLedger). Each decision is one conditional
 * statement on the database's clock. `also` is a condition more of the holder's kind (a shard's:
 * its shard count is still the gateway's).
 */

/**
 * A statement's condition that `lease` (when given) is still its lane's, locking the lane's row
 * until the statement's transaction ends: a takeover (which updates the row) then comes wholly
 * before it, and the condition is false, or wholly after it, and the new holder reads what it
 * wrote.
 */
export const fence = (lease: Lease | undefined): Prisma.Sql =>
  lease
    ? Prisma.sql`EXISTS (SELECT 1 FROM lanes WHERE id = ${BigInt(lease.laneId)} AND generation = ${BigInt(lease.generation)} FOR SHARE)`
    : Prisma.sql`true`;

/**
 * For a statement's `WITH held AS (…)`: extends `lease` by `leaseMs` while it is still its lane's
 * and held, returning the lane's id (no row when it is not). Its update locks the row until the
 * transaction ends, as `fence` does: a takeover comes wholly before it or after the lease it
 * extended runs out.
 */
export const extendLease = (lease: Lease, leaseMs: number | undefined): Prisma.Sql => Prisma.sql`
  UPDATE lanes SET lease_expires_at = greatest(lease_expires_at, now() + ${leaseMs ?? null}::int * interval '1 millisecond')
   WHERE id = ${BigInt(lease.laneId)} AND generation = ${BigInt(lease.generation)} AND holder IS NOT NULL
  RETURNING id`;

/** What a write fenced by `lease` throws when its lane was taken over. */
export const leaseLost = (lease: Lease) =>
  new LeaseLostError(
    `lane ${lease.laneId} was taken over: generation ${lease.generation} is stale`,
  );

/**
 * Takes the lane's lease, when it is free, expired or `holder`'s already: a new generation, or
 * undefined when another holder has it (or `also` is false).
 */
export async function acquireLease(
  pool: pg.Pool,
  laneId: string,
  holder: string,
  leaseMs: number,
  also: Prisma.Sql = Prisma.sql`true`,
): Promise<AcquiredLease | undefined> {
  // Every acquisition is a new generation, even of a lease this holder had: its earlier work's
  // writes are stale from here on.
  const [row] = await runOnPool<{ generation: string; taken_over: boolean }>(
    pool,
    Prisma.sql`
      UPDATE lanes l SET holder = ${holder}, lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond',
             generation = l.generation + 1
        FROM (SELECT id, holder FROM lanes WHERE id = ${BigInt(laneId)}) prev
       WHERE l.id = prev.id AND (l.holder IS NULL OR l.holder = ${holder} OR l.lease_expires_at < now())
         AND ${also}
      RETURNING l.generation, prev.holder IS NOT NULL AS taken_over`,
  );
  return row && { laneId, generation: String(row.generation), takenOver: row.taken_over };
}

/**
 * Extends these leases of `holder`, each only while its generation is still the lane's (and `also`
 * holds); returns those it extended.
 */
export async function renewLeases(
  pool: pg.Pool,
  holder: string,
  leases: Lease[],
  leaseMs: number,
  also: Prisma.Sql = Prisma.sql`true`,
): Promise<Lease[]> {
  if (leases.length === 0) return [];
  // By generation: a lease whose lane was taken over is not renewed, however briefly it ran out,
  // and one that ran out with no one taking it is ours again. Rows are locked in id order, as a
  // step's write locks them (see TranscriptStore.writeSteps), so the two never deadlock; and for no
  // key update, as the update takes them, so a message recorded in the lane (its reference to the
  // lane's key) does not hold a renewal up.
  const rows = await runOnPool<{ id: string; generation: string }>(
    pool,
    Prisma.sql`
      WITH mine AS (
        SELECT id FROM lanes
         WHERE holder = ${holder}
           AND (id, generation) IN (SELECT * FROM unnest(${leases.map((l) => BigInt(l.laneId))}::bigint[], ${leases.map((l) => BigInt(l.generation))}::bigint[]))
           AND ${also}
         ORDER BY id FOR NO KEY UPDATE)
      UPDATE lanes SET lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond'
       WHERE id IN (SELECT id FROM mine)
      RETURNING id, generation`,
  );
  return rows.map((r) => ({ laneId: String(r.id), generation: String(r.generation) }));
}

export async function releaseLease(pool: pg.Pool, laneId: string, holder: string): Promise<void> {
  await queryOnPool(
    pool,
    Prisma.sql`UPDATE lanes SET holder = NULL, lease_expires_at = NULL WHERE id = ${BigInt(laneId)} AND holder = ${holder}`,
  );
}
