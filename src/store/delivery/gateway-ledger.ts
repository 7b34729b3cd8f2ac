import type pg from 'pg';
import type {
  GatewayPort,
  GatewayShape,
  GatewayView,
  IdentifyLimit,
  IdentifyTurn,
  ShardLease,
  ShardSession,
} from '../../core/ports/platform/gateway.ts';
import type { Lease } from '../../core/ports/store.ts';
import type { Database } from '../database.ts';
import { Prisma } from '../generated/client.ts';
import { acquireLease, fence, releaseLease, renewLeases } from '../leases.ts';
import { queryOnPool, runOnPool } from '../pool-statement.ts';

/** The lanes rows of the shards: one per application, generation and shard id. */
const SHARD_PLATFORM = 'discord-gateway';

const ms = (value: number) => Prisma.sql`${value}::int * interval '1 millisecond'`;

/** The lane's generation of shards is still the application's. */
const currentGeneration = (app: string) =>
  Prisma.sql`channel = (SELECT generation::text FROM discord_gateways WHERE application_id = ${app} FOR SHARE)`;

/**
 * Discord's gateway shared by the replicas (GatewayPort): the shard count and the day's identifies
 * on `discord_gateways`, each shard's lease on a lanes row of its own (through the lanes' own
 * statements, leases.ts), its session beside it, the replicas alive on `discord_replicas`. The
 * leases are renewed on the heartbeat's own connections (Database.leasePool).
 */
export class GatewayLedger implements GatewayPort {
  private readonly pool: pg.Pool;
  private readonly leasePool: pg.Pool;

  constructor(db: Pick<Database, 'pool'> & Partial<Pick<Database, 'leasePool'>>) {
    this.pool = db.pool;
    this.leasePool = db.leasePool ?? db.pool;
  }

  async settle(app: string, shardCount: number, limit: IdentifyLimit): Promise<GatewayShape> {
    // The count changes in this one statement: a lease of the old generation is renewed no more
    // (see renew), and none of the new one is taken while one of the old is live (see acquire).
    const [row] = await runOnPool<{
      shard_count: number;
      generation: string;
      max_concurrency: number;
    }>(
      this.pool,
      Prisma.sql`
        INSERT INTO discord_gateways (application_id, shard_count, max_concurrency, identifies_total, identifies_left, identifies_reset_at)
        VALUES (${app}, ${shardCount}, ${limit.maxConcurrency}, ${limit.total}, ${limit.remaining}, now() + ${ms(limit.resetAfterMs)})
        ON CONFLICT (application_id) DO UPDATE SET
          generation = discord_gateways.generation + CASE WHEN discord_gateways.shard_count = EXCLUDED.shard_count THEN 0 ELSE 1 END,
          shard_count = EXCLUDED.shard_count, max_concurrency = EXCLUDED.max_concurrency,
          identifies_total = EXCLUDED.identifies_total,
          -- Discord's own count, unless ours went lower since (identifies it has not counted yet).
          identifies_left = CASE WHEN discord_gateways.identifies_reset_at > now()
                                 THEN least(discord_gateways.identifies_left, EXCLUDED.identifies_left)
                                 ELSE EXCLUDED.identifies_left END,
          identifies_reset_at = EXCLUDED.identifies_reset_at, updated_at = now()
        RETURNING shard_count, generation, max_concurrency`,
    );
    const gateway = {
      shardCount: row!.shard_count,
      generation: String(row!.generation),
      maxConcurrency: row!.max_concurrency,
    };
    await queryOnPool(
      this.pool,
      Prisma.sql`
        INSERT INTO lanes (platform, workspace, channel, thread)
        SELECT ${SHARD_PLATFORM}, ${app}, ${gateway.generation}, s::text FROM generate_series(0, ${shardCount - 1}) s
        ON CONFLICT (platform, workspace, channel, thread) DO NOTHING`,
    );
    return gateway;
  }

  async look(app: string, holder: string, leaseMs: number): Promise<GatewayView> {
    const [row] = await runOnPool<{
      shard_count: number;
      generation: string;
      max_concurrency: number;
      replicas: string[];
      holders: Array<{ shard: string; holder: string }> | null;
      older_live: boolean;
    }>(
      this.leasePool,
      Prisma.sql`
        WITH alive AS (
          INSERT INTO discord_replicas (application_id, holder, expires_at) VALUES (${app}, ${holder}, now() + ${ms(leaseMs)})
          ON CONFLICT (application_id, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at)
        SELECT g.shard_count, g.generation, g.max_concurrency,
               array(SELECT r.holder FROM discord_replicas r WHERE r.application_id = ${app} AND (r.expires_at > now() OR r.holder = ${holder})
                      UNION SELECT ${holder} ORDER BY 1) AS replicas,
               (SELECT jsonb_agg(jsonb_build_object('shard', l.thread, 'holder', l.holder)) FROM lanes l
                 WHERE l.platform = ${SHARD_PLATFORM} AND l.workspace = ${app} AND l.channel = g.generation::text
                   AND l.holder IS NOT NULL AND l.lease_expires_at > now()) AS holders,
               EXISTS (SELECT 1 FROM lanes l WHERE l.platform = ${SHARD_PLATFORM} AND l.workspace = ${app}
                          AND l.channel <> g.generation::text AND l.holder IS NOT NULL AND l.lease_expires_at > now()) AS older_live
          FROM discord_gateways g WHERE g.application_id = ${app}`,
    );
    if (!row) throw new Error(`no Discord gateway is settled for application ${app}`);
    return {
      gateway: {
        shardCount: row.shard_count,
        generation: String(row.generation),
        maxConcurrency: row.max_concurrency,
      },
      replicas: row.replicas,
      holders: new Map((row.holders ?? []).map((h) => [Number(h.shard), h.holder])),
      olderLive: row.older_live,
    };
  }

  async leave(app: string, holder: string): Promise<void> {
    await queryOnPool(
      this.pool,
      Prisma.sql`DELETE FROM discord_replicas WHERE application_id = ${app} AND holder = ${holder}`,
    );
  }

  async acquire(
    app: string,
    gateway: GatewayShape,
    shardId: number,
    holder: string,
    leaseMs: number,
  ): Promise<ShardLease | undefined> {
    const [lane] = await runOnPool<{ id: string }>(
      this.pool,
      Prisma.sql`SELECT id FROM lanes WHERE platform = ${SHARD_PLATFORM} AND workspace = ${app} AND channel = ${gateway.generation} AND thread = ${String(shardId)}`,
    );
    if (!lane) return undefined;
    const noOlderLive = Prisma.sql`NOT EXISTS (SELECT 1 FROM lanes o WHERE o.platform = ${SHARD_PLATFORM} AND o.workspace = ${app}
      AND o.channel <> ${gateway.generation} AND o.holder IS NOT NULL AND o.lease_expires_at > now())`;
    const lease = await acquireLease(
      this.pool,
      String(lane.id),
      holder,
      leaseMs,
      Prisma.sql`${currentGeneration(app)} AND ${noOlderLive}`,
    );
    return lease && { ...lease, shardId };
  }

  async renew(
    app: string,
    holder: string,
    leases: Array<{ lease: Lease; sequence?: number }>,
    leaseMs: number,
  ): Promise<Lease[]> {
    const renewed = await renewLeases(
      this.leasePool,
      holder,
      leases.map((l) => l.lease),
      leaseMs,
      currentGeneration(app),
    );
    const kept = new Set(renewed.map((l) => l.laneId));
    const sequences = leases.filter((l) => l.sequence !== undefined && kept.has(l.lease.laneId));
    if (sequences.length > 0)
      await queryOnPool(
        this.leasePool,
        Prisma.sql`
          UPDATE discord_shard_sessions s SET sequence = greatest(s.sequence, x.sequence), updated_at = now()
            FROM unnest(${sequences.map((l) => BigInt(l.lease.laneId))}::bigint[], ${sequences.map((l) => BigInt(l.sequence!))}::bigint[]) AS x(lane_id, sequence)
           WHERE s.lane_id = x.lane_id`,
      );
    return renewed;
  }

  release(lease: Lease, holder: string): Promise<void> {
    return releaseLease(this.pool, lease.laneId, holder);
  }

  async session(lease: Lease): Promise<ShardSession | undefined> {
    const [row] = await runOnPool<{
      session_id: string;
      sequence: string;
      resume_url: string;
      shard_count: number;
    }>(
      this.pool,
      Prisma.sql`SELECT session_id, sequence, resume_url, shard_count FROM discord_shard_sessions WHERE lane_id = ${BigInt(lease.laneId)}`,
    );
    return (
      row && {
        sessionId: row.session_id,
        sequence: Number(row.sequence),
        resumeUrl: row.resume_url,
        shardCount: row.shard_count,
      }
    );
  }

  async keepSession(lease: Lease, session: ShardSession | undefined): Promise<void> {
    const laneId = BigInt(lease.laneId);
    await queryOnPool(
      this.pool,
      session
        ? Prisma.sql`
          INSERT INTO discord_shard_sessions (lane_id, session_id, sequence, resume_url, shard_count)
          SELECT ${laneId}, ${session.sessionId}, ${session.sequence}, ${session.resumeUrl}, ${session.shardCount} WHERE ${fence(lease)}
          ON CONFLICT (lane_id) DO UPDATE SET session_id = EXCLUDED.session_id, sequence = EXCLUDED.sequence,
             resume_url = EXCLUDED.resume_url, shard_count = EXCLUDED.shard_count, updated_at = now()`
        : Prisma.sql`DELETE FROM discord_shard_sessions WHERE lane_id = ${laneId} AND ${fence(lease)}`,
    );
  }

  async identifyTurn(
    app: string,
    bucket: number,
    spacingMs: number,
    margin: number,
  ): Promise<IdentifyTurn> {
    // One statement. The bucket is taken only where it is free: its row, locked by the upsert, is
    // read as last committed, so of two replicas asking at once one takes it. Then the day's count
    // goes down by one (a new day starts it at Discord's total again) only while it stays above
    // the margin; kept back, the bucket stays taken for its spacing, which no one is waiting on.
    const [row] = await runOnPool<{
      taken: boolean;
      identify: boolean;
      busy_ms: number;
      retry_after_ms: number;
    }>(
      this.pool,
      Prisma.sql`
        WITH slot AS (
          INSERT INTO discord_identify_buckets (application_id, bucket, next_at)
          VALUES (${app}, ${bucket}, now() + ${ms(spacingMs)})
          ON CONFLICT (application_id, bucket) DO UPDATE SET next_at = EXCLUDED.next_at
           WHERE discord_identify_buckets.next_at <= now()
          RETURNING 1),
        budget AS (
          UPDATE discord_gateways SET
            identifies_left = CASE WHEN identifies_reset_at <= now() THEN identifies_total ELSE identifies_left END - 1,
            identifies_reset_at = CASE WHEN identifies_reset_at <= now() THEN now() + interval '1 day' ELSE identifies_reset_at END
           WHERE application_id = ${app} AND EXISTS (SELECT 1 FROM slot)
             AND CASE WHEN identifies_reset_at <= now() THEN identifies_total ELSE identifies_left END > ${margin}
          RETURNING 1)
        SELECT EXISTS (SELECT 1 FROM slot) AS taken, EXISTS (SELECT 1 FROM budget) AS identify,
               coalesce((SELECT greatest(0, extract(epoch FROM next_at - now()) * 1000)::float8
                  FROM discord_identify_buckets WHERE application_id = ${app} AND bucket = ${bucket}), 0) AS busy_ms,
               (SELECT greatest(0, extract(epoch FROM identifies_reset_at - now()) * 1000)::float8
                  FROM discord_gateways WHERE application_id = ${app}) AS retry_after_ms`,
    );
    if (row?.identify) return { identify: true };
    // Another's: until its spacing ends, as this statement's snapshot saw it (a take committed
    // since reads as free, and the next ask says how long).
    if (!row?.taken) return { busyMs: row?.busy_ms ?? 0 };
    return { keptBack: true, retryAfterMs: row.retry_after_ms };
  }
}
