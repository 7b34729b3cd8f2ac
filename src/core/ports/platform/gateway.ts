import type { AcquiredLease } from './delivery.ts';
import type { Lease } from '../store.ts';

/**
 * A platform's gateway split into shards (Discord's), shared by the replicas through the database:
 * each shard held by one replica under a lease of the lanes' kind (generations, renewals, takeover
 * once a holder stops renewing), its session kept with the lease, and the identifies budgeted
 * across replicas. The store implements it (src/store/delivery/gateway-ledger.ts).
 */

/** The shard count every replica connects with; a new count is a new generation. */
export interface GatewayShape {
  shardCount: number;
  /** Bumped by each change of the count: a shard's lease is of one generation. */
  generation: string;
  /** Discord's `max_concurrency`: shards identify in `shard_id % maxConcurrency` buckets. */
  maxConcurrency: number;
}

/** What Discord said of the day's identifies (`session_start_limit`). */
export interface IdentifyLimit {
  total: number;
  remaining: number;
  resetAfterMs: number;
  maxConcurrency: number;
}

/** A shard's lease: a lanes row of its own. */
export interface ShardLease extends AcquiredLease {
  shardId: number;
}

/** The gateway as one replica sees it at a look. */
export interface GatewayView {
  gateway: GatewayShape;
  /** The replicas alive now (this one among them), in a fixed order: the share's ranks. */
  replicas: string[];
  /** Shards of the current generation with a live lease, and whose. */
  holders: Map<number, string>;
  /** Whether a shard of an older generation still has a live lease: no new one may connect yet. */
  olderLive: boolean;
}

/** A shard's gateway session, kept with its lease so that the next holder resumes it. */
export interface ShardSession {
  sessionId: string;
  sequence: number;
  resumeUrl: string;
  shardCount: number;
}

/**
 * An identify's turn: identify now (taken); or the bucket is another's for `busyMs`, then ask
 * again; or none before `retryAfterMs` (the day's budget).
 */
export type IdentifyTurn =
  { identify: true } | { busyMs: number } | { keptBack: true; retryAfterMs: number };

export interface GatewayPort {
  /**
   * The application's gateway with `shardCount` shards: unchanged when it has that count already,
   * else a new generation (one statement: every replica sees the old one or the new one). The
   * day's budget is refreshed from `limit`.
   */
  settle(app: string, shardCount: number, limit: IdentifyLimit): Promise<GatewayShape>;
  /** Marks `holder` alive for `leaseMs` and reads the gateway, the replicas and the shards. */
  look(app: string, holder: string, leaseMs: number): Promise<GatewayView>;
  /** `holder` is gone: the others share its shards at their next look. */
  leave(app: string, holder: string): Promise<void>;
  /**
   * Takes a shard of the current generation when it is free or expired, and no shard of an older
   * generation is still held.
   */
  acquire(
    app: string,
    gateway: GatewayShape,
    shardId: number,
    holder: string,
    leaseMs: number,
  ): Promise<ShardLease | undefined>;
  /**
   * Extends these leases while each is still its lane's and of the current generation; returns
   * those it extended. Each one's sequence is kept with it.
   */
  renew(
    app: string,
    holder: string,
    leases: Array<{ lease: Lease; sequence?: number }>,
    leaseMs: number,
  ): Promise<Lease[]>;
  release(lease: Lease, holder: string): Promise<void>;
  /** The session the shard's last holder left, if any. */
  session(lease: Lease): Promise<ShardSession | undefined>;
  /** Keeps the shard's session (none: it ended), while `lease` is still the shard's. */
  keepSession(lease: Lease, session: ShardSession | undefined): Promise<void>;
  /**
   * Takes an identify for a shard of `bucket` now, if the bucket's last was at least `spacingMs`
   * ago and the day's remaining identifies stay above `margin`. Counted from when it is taken, not
   * asked for: a waiter that wakes late makes the gap longer, never shorter.
   */
  identifyTurn(
    app: string,
    bucket: number,
    spacingMs: number,
    margin: number,
  ): Promise<IdentifyTurn>;
}

/** What the shards did, for the metrics and the log. */
export type ShardEvent =
  | { kind: 'identify'; shardId: number }
  | { kind: 'resume'; shardId: number; replayed: number }
  | { kind: 'gap'; shardId: number; takenOver: boolean }
  | { kind: 'kept_back'; shardId: number }
  | { kind: 'held'; shards: number };
