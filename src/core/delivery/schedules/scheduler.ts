import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import {
  ChannelGoneError,
  type DeliveryPort,
  type InboundMessage,
  type PendingEntry,
} from '../../ports/platform/delivery.ts';
import type { Schedule, SchedulePort } from '../../ports/schedules.ts';
import type { Lease } from '../../ports/store.ts';
import type { Platforms } from '../rules/platforms.ts';
import { latestTick, parseRule } from './schedule-rule.ts';

export interface SchedulerDeps {
  schedules: SchedulePort;
  ledger: Pick<DeliveryPort, 'record' | 'finish' | 'retryLater'>;
  platforms: Platforms;
  logger: Logger;
  /** Hands a lane with a new message to the lanes. */
  work(laneId: string): void;
  now(): Date;
}

/** A scheduled run's first line in the channel: the thread's root. */
export const scheduledHeader = (prompt: string) => {
  const line = prompt.split('\n')[0]!.trim();
  return `Scheduled: ${line.length > 150 ? `${line.slice(0, 150)}…` : line}`;
};

export const OWNER_NOT_ALLOWED = 'its owner may no longer use Spool in this channel';
export const channelGone = (reason: string) =>
  `Spool can no longer post in the channel (${reason})`;

/** A tick's inbox row, until its header is posted: its thread is the schedule's own lane. */
const tickLane = (schedule: Schedule) => ({
  platform: schedule.platform,
  workspace: schedule.workspace,
  channel: schedule.channel,
  thread: `schedule-${schedule.id}`,
});

/**
 * Scheduled prompts, run by every replica's poll: each schedule's latest due tick (one, however
 * many were missed while everything was down) becomes an inbox row keyed by schedule and tick, so
 * that whichever replica inserts it first, it runs once. Its turn posts the header as a new
 * thread, moves the row into that thread, and is answered there like any message of the owner's.
 */
export class Scheduler {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly deps: SchedulerDeps) {}

  start(pollMs: number): void {
    const poll = () =>
      void this.poll().catch((error: unknown) =>
        this.deps.logger.warn('Schedules: could not look for due ticks', {
          error: errorMessage(error),
        }),
      );
    this.timer = setInterval(poll, pollMs);
    this.timer.unref?.();
    poll();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Puts each active schedule's due tick in the inbox (a tick another replica put there: no-op).
   * One schedule that fails is tried again at the next poll; the others go on.
   */
  async poll(): Promise<void> {
    const now = this.deps.now();
    for (const schedule of await this.deps.schedules.active(this.deps.platforms.names()))
      await this.tick(schedule, now).catch((error: unknown) =>
        this.deps.logger.warn('Schedules: could not put a tick in the inbox', {
          schedule: schedule.id,
          error: errorMessage(error),
        }),
      );
  }

  private async tick(schedule: Schedule, now: Date): Promise<void> {
    const { schedules, ledger, platforms } = this.deps;
    const parsed = parseRule(schedule.rule);
    if ('problem' in parsed) return;
    const after = schedule.lastTick ?? schedule.createdAt;
    const tick = latestTick(parsed.rule, schedule.timeZone, after, now);
    if (!tick) return;
    const lane = { ...tickLane(schedule), thread: '' };
    if (!platforms.permits({ lane, user: schedule.owner, roles: schedule.ownerRoles }))
      return this.pause(schedule, OWNER_NOT_ALLOWED);
    const entry = await ledger.record(tickMessage(schedule, tick), false);
    await schedules.ticked(schedule.id, tick);
    if (entry) this.deps.work(entry.laneId);
  }

  /** Whether the row is a tick whose header is not posted yet (`open` takes it). */
  opens(entry: PendingEntry): boolean {
    return entry.delivery.schedule !== undefined && entry.delivery.thread === undefined;
  }

  /**
   * Posts the tick's header as a new thread and moves the row there (its turn runs in that
   * thread's lane); false when the lane must stop (a retry is due later).
   */
  async open(entry: PendingEntry, lease: Lease): Promise<boolean> {
    const { ledger, logger, platforms, schedules } = this.deps;
    const { outbound } = platforms.get(entry.lane.platform);
    try {
      if (!outbound.startThread) throw new Error(`${entry.lane.platform} cannot start threads`);
      const thread = await outbound.startThread(entry, scheduledHeader(entry.text));
      this.deps.work(await schedules.moveToThread(entry, thread, lease));
      return true;
    } catch (error) {
      if (error instanceof ChannelGoneError) {
        const schedule = await schedules.find(entry.lane, entry.delivery.schedule!);
        if (schedule) await this.pause(schedule, channelGone(error.message));
        await ledger.finish(entry.id, 'failed', lease);
        return true;
      }
      logger.warn('Schedules: could not post a run’s header; trying again later', {
        inbox: entry.id,
        error: errorMessage(error),
      });
      await ledger.retryLater(entry.id, Math.min(60_000, 1_000 * 2 ** entry.attempts));
      return false;
    }
  }

  /** Pauses the schedule and tells its owner, once. */
  private async pause(schedule: Schedule, reason: string): Promise<void> {
    if (!(await this.deps.schedules.pause(schedule.id, reason))) return;
    this.deps.logger.warn('Schedules: paused a schedule', { schedule: schedule.id, reason });
    const { outbound } = this.deps.platforms.get(schedule.platform);
    await outbound
      .tell?.(
        { workspace: schedule.workspace, user: schedule.owner },
        `Your schedule #${schedule.id} ("${schedule.rule}": ${scheduledHeader(schedule.prompt).slice(11)}) is paused: ${reason}.`,
      )
      .catch((error: unknown) =>
        this.deps.logger.warn('Schedules: could not tell the owner of a pause', {
          error: errorMessage(error),
        }),
      );
  }
}

/** The tick's inbox row: the owner's message, keyed by schedule and tick. */
function tickMessage(schedule: Schedule, tick: Date): InboundMessage {
  return {
    lane: tickLane(schedule),
    messageKey: `schedule:${schedule.id}:${tick.toISOString()}`,
    kind: 'message',
    user: schedule.owner,
    ...(schedule.ownerRoles.length ? { roles: schedule.ownerRoles } : {}),
    text: schedule.prompt,
    delivery: { schedule: schedule.id, tick: tick.toISOString() },
  };
}
