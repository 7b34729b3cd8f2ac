import type { InboxEntry } from './platform/delivery.ts';
import type { Lease } from './store.ts';

/** Where a schedule runs, and who it runs for. */
export interface SchedulePlace {
  platform: string;
  workspace: string;
  channel: string;
}

/** A prompt that runs on its own: each tick is a turn of `owner`'s in a thread of its own. */
export interface Schedule extends SchedulePlace {
  id: string;
  owner: string;
  /** The owner's roles when they scheduled it (Discord), for the allow-lists at each tick. */
  ownerRoles: string[];
  /** As they wrote it ("every weekday at 9:00", or five cron fields). */
  rule: string;
  /** The IANA time zone the rule's times are read in. */
  timeZone: string;
  prompt: string;
  createdAt: Date;
  /** The latest tick put in the inbox: the next one is after it. */
  lastTick?: Date;
  /** Why it no longer runs (the bot left the channel, the owner may no longer use Spool there). */
  pausedReason?: string;
}

/** `createdAt`: the scheduler's clock, from which its first tick is counted. */
export type NewSchedule = Omit<Schedule, 'id' | 'lastTick' | 'pausedReason'>;

export interface SchedulePort {
  create(schedule: NewSchedule): Promise<Schedule>;
  /** The channel's schedules, paused ones too, oldest first. */
  inChannel(place: SchedulePlace): Promise<Schedule[]>;
  /** The schedule, if it runs in this workspace. */
  find(place: Omit<SchedulePlace, 'channel'>, id: string): Promise<Schedule | undefined>;
  /** Deletes it: no tick of it is inserted from then on. */
  cancel(id: string): Promise<void>;
  /** The schedules of these platforms that are not paused. */
  active(platforms: string[]): Promise<Schedule[]>;
  /** Records `tick` as put in the inbox (a later one already recorded stays). */
  ticked(id: string, tick: Date): Promise<void>;
  /** Pauses it, saying why; false when it was paused (or cancelled) already. */
  pause(id: string, reason: string): Promise<boolean>;
  /** Pauses a workspace's running schedules, saying why; returns how many. */
  pauseWorkspace(place: Omit<SchedulePlace, 'channel'>, reason: string): Promise<number>;
  /** Resumes a workspace's schedules paused for `reason` (and only those); returns how many. */
  resumeWorkspace(place: Omit<SchedulePlace, 'channel'>, reason: string): Promise<number>;
  /**
   * Moves a tick's inbox row into the thread its header started (`thread`, created as a lane if
   * new), under `lease`; returns the thread's lane. The row's delivery gains `thread` and `ts`.
   */
  moveToThread(entry: InboxEntry, thread: string, lease: Lease): Promise<string>;
}
