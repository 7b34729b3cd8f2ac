import { errorMessage } from '../../errors.ts';
import { withLogFields, type Logger } from '../../logger.ts';
import type { AcquiredLease, DeliveryPort, PendingEntry } from '../../ports/platform/delivery.ts';

export interface LaneOptions {
  /**
   * This process's name in lease rows: unique per process, so a restart never inherits a live
   * lease.
   */
  holder: string;
  /** A lane whose holder stops renewing is taken over after this long. */
  leaseMs: number;
  /**
   * How often to look for lanes with due messages and no live lease (startup, takeover, deadlines).
   */
  pollMs: number;
}

export interface LaneDeps {
  ledger: Pick<DeliveryPort, 'claimableLanes' | 'acquire' | 'renew' | 'release' | 'nextPending'>;
  logger: Logger;
  /** The platforms whose lanes this process works. */
  platforms(): string[];
  /**
   * Answers one message under `lease` (its writes carry it); false when the lane must stop (a
   * retry is due later, or the lease is gone), 'released' when the answer's last statement released
   * the lane, nothing else waiting in it.
   */
  answer(
    entry: PendingEntry,
    signal: AbortSignal,
    lease: AcquiredLease,
  ): Promise<boolean | 'released'>;
}

/** Why the lanes cut a lane's work short: the reason its signal is aborted with. */
export class WorkCut extends Error {
  override readonly name = 'WorkCut';
  constructor(readonly why: 'lease_lost' | 'shutdown') {
    super(why === 'lease_lost' ? 'lease lost' : 'shutting down');
  }
}

/**
 * The longest a message's turn waits for arrivals to be recorded and acknowledged: in a burst the
 * acks go first (Slack sends again what it has not seen acknowledged within 3 s), but a steady
 * stream of arrivals never holds turns back for longer than this.
 */
const ACKS_FIRST_MAX_MS = 1_000;

interface LaneWork {
  /** Set once the lane is acquired. */
  lease?: AcquiredLease;
  /** A message arrived while the lane was being worked: look again before letting go. */
  again: boolean;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Who works which lane. A lane is worked by the one replica holding its lease row, one message at
 * a time, in inbox order. The leases are renewed by a heartbeat, and work on a lane that another
 * holder took over stops at once. A heartbeat that fails stops nothing: every write the work makes
 * carries its lease's generation and is refused once the lane is taken over, so the work goes on
 * until the database says the lease is lost. Lanes with due messages and no live lease are found by
 * polling, so a restart or a dead replica's lanes carry on by themselves.
 */
export class Lanes {
  private readonly working = new Map<string, LaneWork>();
  private timers: ReturnType<typeof setInterval>[] = [];
  private draining = false;
  /** Inbound messages being recorded and acknowledged now (see `arrive`). */
  private arriving = 0;
  private readonly waitingForAcks: Array<() => void> = [];
  /** A heartbeat's renewal is under way. */
  private renewing = false;

  constructor(
    private readonly deps: LaneDeps,
    private readonly options: LaneOptions,
  ) {}

  /**
   * Works the lane here, unless this process works it already (then it looks again before letting
   * go).
   */
  work(laneId: string): void {
    const running = this.working.get(laneId);
    if (running) return void (running.again = true);
    if (this.draining) return;
    const work: LaneWork = {
      again: false,
      abort: new AbortController(),
      done: Promise.resolve(),
    };
    this.working.set(laneId, work);
    work.done = this.workLane(laneId, work)
      .catch((error: unknown) =>
        this.deps.logger.error('Lane failed', { lane: laneId, error: errorMessage(error) }),
      )
      .finally(() => {
        this.working.delete(laneId);
        if (work.again) this.work(laneId);
      });
  }

  /**
   * An inbound message is being recorded and acknowledged until the returned function is called.
   * Meanwhile no turn starts its next message: a turn's CPU would hold the ack behind it in the
   * event loop, for every step of the ack (each statement's answer waits for a turn of the loop).
   */
  arrive(): () => void {
    this.arriving++;
    let arrived = false;
    return () => {
      if (arrived) return;
      arrived = true;
      if (--this.arriving === 0) this.waitingForAcks.splice(0).forEach((go) => go());
    };
  }

  /** Resolves once no message is being recorded, or after ACKS_FIRST_MAX_MS. */
  private acksFirst(): Promise<void> {
    if (this.arriving === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ACKS_FIRST_MAX_MS);
      this.waitingForAcks.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Starts taking over lanes: at once (what an earlier run left pending), then every `pollMs`. */
  start(): void {
    const upkeep = (task: () => Promise<void>) => () =>
      void task().catch((error: unknown) =>
        this.deps.logger.warn('Delivery upkeep failed', { error: errorMessage(error) }),
      );
    const every = (ms: number, task: () => Promise<void>) => {
      const timer = setInterval(upkeep(task), ms);
      timer.unref?.();
      return timer;
    };
    this.timers = [
      every(this.options.pollMs, () => this.poll()),
      every(Math.max(100, this.options.leaseMs / 3), () => this.heartbeat()),
    ];
    upkeep(() => this.poll())();
  }

  /**
   * Starts no new message, lets running work finish for up to `graceMs`, then cuts the rest short
   * and releases every lease. What is unfinished stays pending for the next holder.
   */
  async stop(graceMs: number): Promise<void> {
    this.draining = true;
    clearInterval(this.timers[0]);
    const running = () => Promise.all([...this.working.values()].map((w) => w.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      running(),
      new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    for (const work of this.working.values()) work.abort.abort(new WorkCut('shutdown'));
    await running();
    this.timers.forEach(clearInterval);
  }

  private async workLane(laneId: string, work: LaneWork): Promise<void> {
    const { ledger } = this.deps;
    await this.acksFirst();
    const lease = await ledger.acquire(laneId, this.options.holder, this.options.leaseMs);
    if (!lease) return;
    work.lease = lease;
    let held = true;
    try {
      while (!this.draining && !work.abort.signal.aborted) {
        // Nothing due: the lease is given up by the statement that finds it so (nextPending's, or
        // the answer's last post's). A message recorded after that statement sets `again` (from
        // here on), and the lane is worked anew, from its acquisition.
        work.again = false;
        await this.acksFirst();
        const entry = await ledger.nextPending(laneId, this.options.holder);
        if (!entry) {
          held = false;
          break;
        }
        const fields = { platform: entry.lane.platform, inbox: entry.id };
        const answered = await withLogFields(this.deps.logger, fields, () =>
          this.deps.answer(entry, work.abort.signal, lease),
        );
        if (answered === 'released') held = false;
        if (answered !== true) break;
      }
    } finally {
      work.again &&= !this.draining;
      if (held) await ledger.release(laneId, this.options.holder);
    }
  }

  private async poll(): Promise<void> {
    if (this.draining) return;
    for (const laneId of await this.deps.ledger.claimableLanes(this.deps.platforms(), 100))
      this.work(laneId);
  }

  /**
   * Renews the leases held when it starts; work whose lease the database did not renew (another
   * holder took the lane) stops at once. Only those leases are judged: a lane acquired meanwhile is
   * left to the next heartbeat. A renewal that fails (the database is away) stops nothing.
   */
  private async heartbeat(): Promise<void> {
    const asked = [...this.working.values()].flatMap((work) => (work.lease ? [work.lease] : []));
    // One renewal at a time: one held up by a stalled database is not queued behind by more.
    if (asked.length === 0 || this.renewing) return;
    this.renewing = true;
    const renewed = await this.deps.ledger
      .renew(this.options.holder, asked, this.options.leaseMs)
      .finally(() => (this.renewing = false));
    const kept = new Set(renewed.map((lease) => `${lease.laneId}:${lease.generation}`));
    const lost = new Set(asked.filter((lease) => !kept.has(`${lease.laneId}:${lease.generation}`)));
    for (const work of this.working.values())
      if (work.lease && lost.has(work.lease)) work.abort.abort(new WorkCut('lease_lost'));
  }
}
