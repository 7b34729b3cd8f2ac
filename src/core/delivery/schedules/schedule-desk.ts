import type { Asker } from '../../ports/platform/platform.ts';
import type { Schedule, SchedulePort } from '../../ports/schedules.ts';
import type { Platforms } from '../rules/platforms.ts';
import { nextTick, parseRule, startsWithSixCronFields, validTimeZone } from './schedule-rule.ts';

/** What `schedule …` asks for: a new schedule, the channel's list, or a cancellation. */
export type ScheduleCommand =
  | { verb: 'create'; rule: string; prompt: string }
  | { verb: 'list' }
  | { verb: 'cancel'; id: string }
  | { verb: 'help'; problem?: string };

export const SCHEDULE_HELP = [
  'Schedule a prompt: `schedule "every weekday at 9:00" Summarize yesterday\'s incidents`.',
  'When: every day / weekday / weekend / monday… at 9:00 (or 8am), every hour, every 15 minutes, every 2 hours, or five cron fields ("0 9 * * 1-5"), in your time zone.',
  "Each run is a new thread here, your turn under this channel's rules. `schedule list` shows the channel's schedules; `schedule cancel <id>` ends one.",
].join('\n');

/** The longest rule written without quotes: six cron fields, or "every monday at 8:15 pm". */
const MAX_RULE_WORDS = 6;

/**
 * The words after `schedule`: `list`, `cancel <id>`, or a rule and a prompt. The rule is quoted
 * ("…" or Slack's “…”), or six cron fields, or else the longest run of first words that reads as
 * one; where none does, what is wrong with the longest that is a rule with a wrong value ("every
 * 48 hours"), as quoted it would be.
 */
export function scheduleCommand(words: string): ScheduleCommand {
  const text = words.trim();
  if (text === '' || text === 'help') return { verb: 'help' };
  if (text === 'list') return { verb: 'list' };
  const cancel = /^cancel\s+#?(\S+)$/.exec(text);
  if (cancel) return { verb: 'cancel', id: cancel[1]! };
  const quoted = /^["“”]([^"“”]+)["“”]\s*([\s\S]*)$/.exec(text);
  if (quoted) return created(quoted[1]!, quoted[2]!.trim());
  const all = text.split(/\s+/);
  if (startsWithSixCronFields(all))
    return created(all.slice(0, 6).join(' '), all.slice(6).join(' '));
  let wrong: string | undefined;
  for (let n = Math.min(MAX_RULE_WORDS, all.length - 1); n >= 1; n--) {
    const rule = all.slice(0, n).join(' ');
    const parsed = parseRule(rule);
    if ('rule' in parsed) return created(rule, all.slice(n).join(' '));
    if (!parsed.unrecognized) wrong ??= parsed.problem;
  }
  if (wrong) return { verb: 'help', problem: wrong };
  // No rule with a prompt after it: what is wrong with the rule, or that the prompt is missing.
  return created(all.slice(0, MAX_RULE_WORDS).join(' '), '');
}

function created(rule: string, prompt: string): ScheduleCommand {
  const parsed = parseRule(rule);
  if ('problem' in parsed) return { verb: 'help', problem: parsed.problem };
  if (!prompt)
    return { verb: 'help', problem: `What should run "${rule}"? Write the prompt after it.` };
  return { verb: 'create', rule: rule.trim(), prompt };
}

/** Who asks to cancel a schedule, in their workspace. */
export interface ScheduleCanceller {
  platform: string;
  workspace: string;
  user: string;
}

/** A cancellation: done, no such schedule in the workspace, or another's (its owner named). */
export type Cancellation = 'cancelled' | 'absent' | { owner: string };

export interface ScheduleDeskDeps {
  schedules: SchedulePort;
  platforms: Platforms;
  now(): Date;
  /** Where the platform does not say the person's time zone. */
  defaultTimeZone: string;
  /** Whether they may cancel anyone's schedule there (one of the policy's admins). */
  isAdmin(who: ScheduleCanceller): boolean;
}

/** `schedule`, `schedule list`, `schedule cancel`, for a person in a channel: the answer's text. */
export class ScheduleDesk {
  constructor(private readonly deps: ScheduleDeskDeps) {}

  /** Undefined where `who` may not talk to Spool (the platform's refusal). */
  async command(who: Asker, words: string, timeZone?: string): Promise<string | undefined> {
    if (!this.deps.platforms.permits(who)) return undefined;
    const asked = scheduleCommand(words);
    switch (asked.verb) {
      case 'help':
        return asked.problem ? `${asked.problem}\n\n${SCHEDULE_HELP}` : SCHEDULE_HELP;
      case 'list':
        return this.list(who);
      case 'cancel':
        return this.cancel(who, asked.id);
      case 'create':
        return this.create(who, asked.rule, asked.prompt, timeZone);
    }
  }

  private async create(who: Asker, rule: string, prompt: string, asked?: string): Promise<string> {
    if (!this.deps.platforms.get(who.lane.platform).outbound.startThread)
      return 'Scheduled prompts cannot run here yet: Spool cannot start a thread of its own on this platform.';
    const timeZone = asked && validTimeZone(asked) ? asked : this.deps.defaultTimeZone;
    const { platform, workspace, channel } = who.lane;
    const schedule = await this.deps.schedules.create({
      platform,
      workspace,
      channel,
      owner: who.user,
      ownerRoles: who.roles ?? [],
      rule,
      timeZone,
      prompt,
      createdAt: this.deps.now(),
    });
    return `Scheduled #${schedule.id}: ${describe(schedule, this.deps.now())}\nCancel it with \`schedule cancel ${schedule.id}\`.`;
  }

  private async list(who: Asker): Promise<string> {
    const found = await this.deps.schedules.inChannel(who.lane);
    if (found.length === 0) return 'No schedules in this channel.';
    const now = this.deps.now();
    return found.map((s) => `#${s.id} by <@${s.owner}>: ${describe(s, now)}`).join('\n');
  }

  private async cancel(who: Asker, id: string): Promise<string> {
    const done = await this.cancelOne({ ...who.lane, user: who.user }, id);
    if (done === 'absent')
      return `There is no schedule #${id} here (\`schedule list\` shows them).`;
    if (done !== 'cancelled')
      return `Only <@${done.owner}>, who scheduled #${id}, or an admin may cancel it.`;
    return `Cancelled schedule #${id}.`;
  }

  /**
   * Cancels schedule `id` of the person's workspace, if it is theirs or they are an admin: what
   * `schedule cancel` does, and the web pages' Cancel button. Among direct messages outside any
   * workspace, another's schedule is not even said to exist.
   */
  async cancelOne(who: ScheduleCanceller, id: string): Promise<Cancellation> {
    const schedule = await this.deps.schedules.find(who, id);
    if (!schedule) return 'absent';
    if (schedule.owner !== who.user && !this.deps.isAdmin(who))
      return this.deps.platforms.isDirectMessages(who) ? 'absent' : { owner: schedule.owner };
    await this.deps.schedules.cancel(schedule.id);
    return 'cancelled';
  }
}

/** When a schedule runs next after `now`, by its rule (paused or not). */
export function nextRun(schedule: Schedule, now: Date): Date | undefined {
  const parsed = parseRule(schedule.rule);
  return 'rule' in parsed ? nextTick(parsed.rule, schedule.timeZone, now) : undefined;
}

/** "every weekday at 9:00 (Europe/Paris): Summarize… Next run: …", or why it is paused. */
function describe(schedule: Schedule, now: Date): string {
  const head = `"${schedule.rule}" (${schedule.timeZone}): ${schedule.prompt}`;
  if (schedule.pausedReason) return `${head}\nPaused: ${schedule.pausedReason}.`;
  const next = nextRun(schedule, now);
  return next ? `${head}\nNext run: ${wallTime(next, schedule.timeZone)}.` : head;
}

const wallTime = (instant: Date, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(instant);
