import { performance } from 'node:perf_hooks';
import { errorMessage } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import type {
  GatewayPort,
  GatewayShape,
  ShardEvent,
  ShardLease,
} from '../../../core/ports/platform/gateway.ts';
import { shareMoves } from './share.ts';

/** The longest a start waits for its shards to connect; they go on connecting after. */
const START_WAIT_MS = 30_000;

/** What the keeper needs of a shard's connection (ShardConnection). */
export interface HeldConnection {
  readonly shardId: number;
  sequence(): number | undefined;
  open(): Promise<void>;
  /** Closes it, its session left resumable for the next holder. */
  close(): Promise<void>;
}

export interface ShardKeeperOptions {
  app: string;
  /** This process's name on the leases (unique per process, as the lanes'). */
  holder: string;
  /** A shard whose holder stops renewing is taken over after this long. */
  leaseMs: number;
}

export interface ShardKeeperDeps {
  gateway: GatewayPort;
  connect(lease: ShardLease, gateway: GatewayShape): HeldConnection;
  onEvent(event: ShardEvent): void;
  logger: Logger;
}

interface Held {
  lease: ShardLease;
  connection: HeldConnection;
  /** Closes the connection before its lease can run out, unless a renewal comes first. */
  deadline: ReturnType<typeof setTimeout>;
  opened: Promise<void>;
  /** Connected, its session READY or RESUMED. */
  ready: boolean;
}

/**
 * Which shards this replica holds. Every quarter of a lease it renews its shards' leases (with each
 * one's sequence), reads who is alive and who holds what, hands over what is past its even share
 * and takes free shards up to it. A shard whose lease was not renewed (taken over, or its count
 * changed) is closed at once; one whose renewals cannot reach the database is closed a quarter of a
 * lease before the lease would run out, on this process's own clock, so that no two replicas are
 * ever connected as one shard.
 */
export class ShardKeeper {
  private readonly held = new Map<number, Held>();
  private timer?: ReturnType<typeof setInterval>;
  private ticking = false;
  private stopped = false;

  constructor(
    private readonly deps: ShardKeeperDeps,
    private readonly options: ShardKeeperOptions,
  ) {}

  /**
   * Takes this replica's share and waits up to `waitMs` for those shards to connect (an identify
   * held back by the day's budget waits for hours); then keeps it.
   */
  async start(waitMs = START_WAIT_MS): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.leaseMs / 4);
    this.timer.unref?.();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([...this.held.values()].map((h) => h.opened)),
      new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
  }

  /** Every held shard closed (resumable by its next holder) and released, then this replica gone. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all([...this.held.keys()].map((id) => this.handOver(id)));
    await this.deps.gateway.leave(this.options.app, this.options.holder).catch(() => {});
  }

  /** Whether every shard held is connected. */
  ready(): boolean {
    return [...this.held.values()].every((h) => h.ready);
  }

  /** The shards held now. */
  shards(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      await this.renew();
      const { app, holder, leaseMs } = this.options;
      const view = await this.deps.gateway.look(app, holder, leaseMs);
      const moves = shareMoves({
        shardCount: view.gateway.shardCount,
        replicas: view.replicas,
        me: holder,
        held: this.shards(),
        holders: view.holders,
      });
      for (const shardId of moves.hand) await this.handOver(shardId);
      if (!view.olderLive && !this.stopped)
        for (const shardId of moves.take) await this.take(view.gateway, shardId);
      this.deps.onEvent({ kind: 'held', shards: this.held.size });
    } catch (error) {
      this.deps.logger.warn('Discord: shard upkeep failed', { error: errorMessage(error) });
    } finally {
      this.ticking = false;
    }
  }

  private async renew(): Promise<void> {
    const asked = [...this.held.values()];
    if (asked.length === 0) return;
    const started = performance.now();
    const renewed = await this.deps.gateway.renew(
      this.options.app,
      this.options.holder,
      asked.map((h) => ({ lease: h.lease, sequence: h.connection.sequence() })),
      this.options.leaseMs,
    );
    const kept = new Set(renewed.map((l) => `${l.laneId}:${l.generation}`));
    for (const h of asked) {
      if (this.held.get(h.lease.shardId) !== h) continue;
      if (kept.has(`${h.lease.laneId}:${h.lease.generation}`)) this.armDeadline(h, started);
      else await this.drop(h, 'its lease was taken over or its shard count changed');
    }
  }

  private async take(gateway: GatewayShape, shardId: number): Promise<void> {
    const { app, holder, leaseMs } = this.options;
    const started = performance.now();
    const lease = await this.deps.gateway.acquire(app, gateway, shardId, holder, leaseMs);
    if (!lease) return;
    const connection = this.deps.connect(lease, gateway);
    const held: Held = {
      lease,
      connection,
      deadline: undefined!,
      opened: Promise.resolve(),
      ready: false,
    };
    this.armDeadline(held, started);
    this.held.set(shardId, held);
    held.opened = connection.open().then(
      () => void (held.ready = true),
      async (error: unknown) => {
        this.deps.logger.error(`Discord: shard ${shardId} could not connect`, {
          error: errorMessage(error),
        });
        await this.handOver(shardId);
      },
    );
  }

  /**
   * The lease runs out `leaseMs` after the renewal was sent (the database's clock starts later):
   * the connection closes a quarter of a lease before that, unless the next renewal comes first.
   */
  private armDeadline(held: Held, sentAt: number): void {
    clearTimeout(held.deadline);
    const closeIn = sentAt + (this.options.leaseMs * 3) / 4 - performance.now();
    held.deadline = setTimeout(
      () => void this.drop(held, 'its lease could not be renewed in time'),
      Math.max(0, closeIn),
    );
    held.deadline.unref?.();
  }

  /** Closes a shard whose lease is no longer this replica's (or soon will not be). */
  private async drop(held: Held, why: string): Promise<void> {
    if (this.held.get(held.lease.shardId) !== held) return;
    this.held.delete(held.lease.shardId);
    clearTimeout(held.deadline);
    this.deps.logger.warn(`Discord: shard ${held.lease.shardId} closed: ${why}`);
    await held.connection.close();
  }

  private async handOver(shardId: number): Promise<void> {
    const held = this.held.get(shardId);
    if (!held) return;
    this.held.delete(shardId);
    clearTimeout(held.deadline);
    await held.connection.close();
    await this.deps.gateway.release(held.lease, this.options.holder).catch((error: unknown) =>
      this.deps.logger.warn(`Discord: shard ${shardId} not released; its lease runs out`, {
        error: errorMessage(error),
      }),
    );
  }
}
