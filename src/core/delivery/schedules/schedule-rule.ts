/**
 * When a schedule runs: its rule as people write it ("every weekday at 9:00", "every 15 minutes",
 * five cron fields, or six with seconds first), read in a time zone, and the ticks it comes to.
 * Pure: the clock is an argument.
 */

/** The five cron fields, each as the values it allows. */
export interface CronFields {
  minutes: number[];
  hours: number[];
  daysOfMonth: number[];
  months: number[];
  /** 0 is Sunday. */
  daysOfWeek: number[];
  /** Both day fields were restricted: a day matching either runs (cron's rule). */
  eitherDay: boolean;
}

/**
 * `interval`: every `everyMs` on the clock, counted from midnight UTC (every 15 minutes is :00,
 * :15, :30, :45), whatever the time zone. `cron`: the fields' wall-clock times in the time zone.
 */
export type ScheduleRule =
  { kind: 'interval'; everyMs: number } | { kind: 'cron'; cron: CronFields };

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTH_NAMES = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
/** How far a rule's next (or latest) day is looked for: past a leap day's eight-year gap. */
const MAX_DAYS = 366 * 9;

export const RULE_HELP =
  'Write when as "every day at 9:00", "every weekday at 17:30", "every monday at 8am", "every hour", "every 15 minutes", "every 2 hours", or five cron fields ("0 9 * * 1-5"; six, seconds first, where the seconds are 0).';

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * What is wrong with a rule; `unrecognized` where the words are no rule at all (not a rule with a
 * wrong value in it).
 */
export interface RuleProblem {
  problem: string;
  unrecognized?: true;
}

/** The rule the words say, or what is wrong with them. */
export function parseRule(text: string): { rule: ScheduleRule } | RuleProblem {
  const words = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const natural = naturalRule(words);
  if (natural) return natural;
  const fields = words.split(' ');
  if (fields.every((f) => /^[\d*a-z,/-]+$/.test(f))) {
    if (fields.length === 5) return cronRule(fields);
    if (fields.length === 6) return secondsCronRule(fields);
  }
  return {
    problem: `I did not understand "${text.trim()}" as a schedule. ${RULE_HELP}`,
    unrecognized: true,
  };
}

/**
 * Whether the words begin with six cron fields, seconds first (Quartz's, Spring's and node-cron's
 * form): five of digits and `* , / -`, then a day of week. Such a start is the rule, whatever
 * follows, so that its seconds are read as seconds and not its sixth field as the prompt.
 */
export function startsWithSixCronFields(words: string[]): boolean {
  const dayOfWeek = CRON_FIELDS[4];
  return (
    words.length >= 6 &&
    words.slice(0, 5).every((w) => /^[\d*,/-]+$/.test(w)) &&
    typeof cronField(words[5]!.toLowerCase(), dayOfWeek) !== 'string'
  );
}

/**
 * Six cron fields, seconds first: the last five, where the seconds are 0. Schedules run on the
 * minute, so a rule that asks for another second is refused rather than run at another time.
 */
function secondsCronRule([seconds, ...fields]: string[]): { rule: ScheduleRule } | RuleProblem {
  if (!/^0{1,2}$/.test(seconds!))
    return {
      problem: `Cron seconds "${seconds}": schedules run on the minute, so six cron fields must start with 0 (or write five: "0 9 * * 1-5").`,
    };
  return cronRule(fields);
}

function naturalRule(words: string): { rule: ScheduleRule } | RuleProblem | undefined {
  if (words === 'every minute') return interval(1);
  if (words === 'every hour') return interval(60);
  const every = /^every (\d+) (minute|minutes|hour|hours)$/.exec(words);
  if (every) {
    const count = Number(every[1]);
    const minutes = every[2]!.startsWith('hour') ? count * 60 : count;
    if (count < 1 || minutes > 24 * 60)
      return { problem: `"${words}": the interval must be from 1 minute to 24 hours.` };
    return interval(minutes);
  }
  const daily = /^(?:every )?(day|daily|weekday|weekend|[a-z]+day)s? at (.+)$/.exec(words);
  if (!daily) return undefined;
  const days = daysOf(daily[1]!);
  if (!days) return { problem: `"${daily[1]}" is not a day. ${RULE_HELP}` };
  const time = timeOf(daily[2]!);
  if (!time) return { problem: `"${daily[2]}" is not a time of day (9:00, 17:30, 8am).` };
  return {
    rule: {
      kind: 'cron',
      cron: {
        minutes: [time.minute],
        hours: [time.hour],
        daysOfMonth: range(1, 31),
        months: range(1, 12),
        daysOfWeek: days,
        eitherDay: false,
      },
    },
  };
}

const interval = (minutes: number) => ({
  rule: { kind: 'interval', everyMs: minutes * MINUTE_MS } as const,
});

function daysOf(word: string): number[] | undefined {
  if (word === 'day' || word === 'daily') return range(0, 6);
  if (word === 'weekday') return range(1, 5);
  if (word === 'weekend') return [0, 6];
  const day = DAY_NAMES.findIndex((name) => word.startsWith(name) && word.endsWith('day'));
  return day < 0 ? undefined : [day];
}

/** `9:00`, `17:30`, `8am`, `8:15 pm`, `noon`, `midnight`. */
function timeOf(text: string): { hour: number; minute: number } | undefined {
  if (text === 'noon') return { hour: 12, minute: 0 };
  if (text === 'midnight') return { hour: 0, minute: 0 };
  const match = /^(\d{1,2})(?::(\d{2}))? ?(am|pm)?$/.exec(text);
  if (!match) return undefined;
  let hour = Number(match[1]);
  const minute = Number(match[2] ?? 0);
  const half = match[3];
  if (half) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half === 'pm' ? 12 : 0);
  } else if (match[2] === undefined) return undefined;
  return hour <= 23 && minute <= 59 ? { hour, minute } : undefined;
}

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, offset: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, offset: 0 },
] as const;

function cronRule(fields: string[]): { rule: ScheduleRule } | RuleProblem {
  const values: number[][] = [];
  for (const [i, spec] of CRON_FIELDS.entries()) {
    const parsed = cronField(fields[i]!, spec);
    if (typeof parsed === 'string')
      return { problem: `Cron ${spec.name} "${fields[i]}": ${parsed}` };
    values.push(parsed);
  }
  const [minutes, hours, daysOfMonth, months, weekdays] = values as [
    number[],
    number[],
    number[],
    number[],
    number[],
  ];
  const daysOfWeek = [...new Set(weekdays.map((d) => d % 7))].sort((a, b) => a - b);
  const eitherDay = fields[2] !== '*' && fields[4] !== '*';
  return {
    rule: { kind: 'cron', cron: { minutes, hours, daysOfMonth, months, daysOfWeek, eitherDay } },
  };
}

type FieldSpec = (typeof CRON_FIELDS)[number];

/** One field's values (`*`, `5`, `1-5`, `*\/15`, `mon-fri`, lists of them), or what is wrong. */
function cronField(text: string, spec: FieldSpec): number[] | string {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [base = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) return `"${stepText}" is not a step`;
    let from: number = spec.min;
    let to: number = spec.max;
    if (base !== '*') {
      const [low, high] = base.split('-');
      const a = cronValue(low ?? '', spec);
      const b =
        high === undefined ? (stepText === undefined ? a : spec.max) : cronValue(high, spec);
      if (a === undefined || b === undefined || a > b)
        return `"${base}" is not a value or range from ${spec.min} to ${spec.max}`;
      [from, to] = [a, b];
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

function cronValue(text: string, spec: FieldSpec): number | undefined {
  const named = 'names' in spec ? (spec.names as readonly string[]).indexOf(text) : -1;
  const offset = 'offset' in spec ? spec.offset : 0;
  const value = named >= 0 ? named + offset : /^\d+$/.test(text) ? Number(text) : NaN;
  return value >= spec.min && value <= spec.max ? value : undefined;
}

/** Whether `zone` is a time zone this runtime knows (`Europe/Paris`, `UTC`). */
export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The latest tick after `after` and no later than `now`: at most one, however many were missed. */
export function latestTick(
  rule: ScheduleRule,
  zone: string,
  after: Date,
  now: Date,
): Date | undefined {
  if (rule.kind === 'interval') {
    const tick = Math.floor(now.getTime() / rule.everyMs) * rule.everyMs;
    return tick > after.getTime() ? new Date(tick) : undefined;
  }
  const today = wallClock(now.getTime(), zone);
  for (let back = 0; back <= MAX_DAYS; back++) {
    const day = Date.UTC(today.year, today.month - 1, today.day) - back * DAY_MS;
    // A day that ended (anywhere on Earth) before `after`: no tick of it or earlier comes after.
    if (day + 2 * DAY_MS < after.getTime()) return undefined;
    for (const tick of ticksOn(rule.cron, day, zone).reverse()) {
      if (tick > now.getTime()) continue;
      return tick > after.getTime() ? new Date(tick) : undefined;
    }
  }
  return undefined;
}

/** The first tick after `now`; none for a rule no day matches (February 30th). */
export function nextTick(rule: ScheduleRule, zone: string, now: Date): Date | undefined {
  if (rule.kind === 'interval')
    return new Date((Math.floor(now.getTime() / rule.everyMs) + 1) * rule.everyMs);
  const today = wallClock(now.getTime(), zone);
  for (let ahead = 0; ahead <= MAX_DAYS; ahead++) {
    const day = Date.UTC(today.year, today.month - 1, today.day) + ahead * DAY_MS;
    const tick = ticksOn(rule.cron, day, zone).find((t) => t > now.getTime());
    if (tick !== undefined) return new Date(tick);
  }
  return undefined;
}

/**
 * The instants of a day's ticks (`day`: its midnight as a UTC date), in order. A wall-clock time
 * the zone skips (a DST change) has no tick; one it repeats has the first.
 */
function ticksOn(cron: CronFields, day: number, zone: string): number[] {
  const date = new Date(day);
  const [month, dom, dow] = [date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCDay()];
  if (!cron.months.includes(month)) return [];
  const byMonthDay = cron.daysOfMonth.includes(dom);
  const byWeekDay = cron.daysOfWeek.includes(dow);
  if (cron.eitherDay ? !(byMonthDay || byWeekDay) : !(byMonthDay && byWeekDay)) return [];
  const ticks: number[] = [];
  for (const hour of cron.hours)
    for (const minute of cron.minutes) {
      const instant = zonedInstant(day + hour * 3_600_000 + minute * MINUTE_MS, zone);
      if (instant !== undefined) ticks.push(instant);
    }
  return ticks.sort((a, b) => a - b);
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** What the clocks in `zone` show at `instant`. */
function wallClock(instant: number, zone: string): WallClock {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formats.set(zone, format);
  }
  const parts = format.formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
  };
}

/** The zone's offset from UTC at `instant`, in ms (whole minutes). */
function offsetAt(instant: number, zone: string): number {
  const c = wallClock(instant, zone);
  const floor = Math.floor(instant / MINUTE_MS) * MINUTE_MS;
  return Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute) - floor;
}

/**
 * The instant the zone's clocks show `wall` (a wall-clock time written as if UTC), or undefined
 * when they never show it (skipped by a DST change). Of a time shown twice, the first.
 */
function zonedInstant(wall: number, zone: string): number | undefined {
  const earlier =
    wall - Math.max(offsetAt(wall - DAY_MS / 2, zone), offsetAt(wall + DAY_MS / 2, zone));
  const later =
    wall - Math.min(offsetAt(wall - DAY_MS / 2, zone), offsetAt(wall + DAY_MS / 2, zone));
  for (const instant of [earlier, later]) {
    const c = wallClock(instant, zone);
    if (Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute) === wall) return instant;
  }
  return undefined;
}
