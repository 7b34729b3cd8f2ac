import { describe, expect, it } from 'vitest';
import {
  latestTick,
  nextTick,
  parseRule,
  startsWithSixCronFields,
  validTimeZone,
  type ScheduleRule,
} from './schedule-rule.ts';

const rule = (text: string): ScheduleRule => {
  const parsed = parseRule(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.rule;
};
const at = (iso: string) => new Date(iso);
const next = (text: string, zone: string, now: string) =>
  nextTick(rule(text), zone, at(now))?.toISOString();
const latest = (text: string, zone: string, after: string, now: string) =>
  latestTick(rule(text), zone, at(after), at(now))?.toISOString();

describe('parseRule', () => {
  it.each([
    ['every minute', 60_000],
    ['every hour', 3_600_000],
    ['every 15 minutes', 900_000],
    ['every 1 minute', 60_000],
    ['Every  2   Hours', 7_200_000],
    ['every 24 hours', 86_400_000],
  ])('reads "%s" as an interval', (text, everyMs) => {
    expect(parseRule(text)).toEqual({ rule: { kind: 'interval', everyMs } });
  });

  it.each([
    ['every day at 9:00', [0, 1, 2, 3, 4, 5, 6], 9, 0],
    ['daily at 17:30', [0, 1, 2, 3, 4, 5, 6], 17, 30],
    ['every weekday at 9:00', [1, 2, 3, 4, 5], 9, 0],
    ['every weekday at 09:05', [1, 2, 3, 4, 5], 9, 5],
    ['every weekend at noon', [0, 6], 12, 0],
    ['every monday at 8am', [1], 8, 0],
    ['every Friday at 5:45 pm', [5], 17, 45],
    ['every sunday at 12am', [0], 0, 0],
    ['every saturday at 12pm', [6], 12, 0],
    ['every mondays at midnight', [1], 0, 0],
  ])('reads "%s" as days %j at %i:%i', (text, days, hour, minute) => {
    const parsed = rule(text);
    expect(parsed.kind).toBe('cron');
    if (parsed.kind !== 'cron') return;
    expect(parsed.cron.daysOfWeek).toEqual(days);
    expect(parsed.cron.hours).toEqual([hour]);
    expect(parsed.cron.minutes).toEqual([minute]);
    expect(parsed.cron.daysOfMonth).toHaveLength(31);
    expect(parsed.cron.months).toHaveLength(12);
  });

  it('reads five cron fields: lists, ranges, steps, names, 7 as Sunday', () => {
    expect(rule('*/15 9-17 * * mon-fri')).toEqual({
      kind: 'cron',
      cron: {
        minutes: [0, 15, 30, 45],
        hours: [9, 10, 11, 12, 13, 14, 15, 16, 17],
        daysOfMonth: Array.from({ length: 31 }, (_, i) => i + 1),
        months: Array.from({ length: 12 }, (_, i) => i + 1),
        daysOfWeek: [1, 2, 3, 4, 5],
        eitherDay: false,
      },
    });
    const cron = rule('0,30 8 1,15 jan,jul 7');
    expect(cron.kind === 'cron' && cron.cron).toMatchObject({
      minutes: [0, 30],
      hours: [8],
      daysOfMonth: [1, 15],
      months: [1, 7],
      daysOfWeek: [0],
      eitherDay: true,
    });
    const stepFrom = rule('5/20 * * * *');
    expect(stepFrom.kind === 'cron' && stepFrom.cron.minutes).toEqual([5, 25, 45]);
  });

  it('reads six cron fields, seconds first, as the five after the seconds where they are 0', () => {
    expect(rule('0 0 9 * * 1-5')).toEqual(rule('0 9 * * 1-5'));
    expect(rule('00 */15 9-17 * jan-jun mon-fri')).toEqual(rule('*/15 9-17 * jan-jun mon-fri'));
  });

  it.each([
    [['0', '0', '9', '*', '*', '1-5', 'Standup'], true],
    [['0', '0', '9', '*', '*', 'mon-fri'], true],
    [['30', '0', '9', '*', '*', '1-5'], true],
    [['0', '9', '*', '*', '1-5', 'Monday', 'notes'], false],
    [['0', '9', '*', '*', '1-5', 'report'], false],
    [['0', '0', '9', '*', '*'], false],
    [['every', '2', 'hours', 'at', 'the', 'top'], false],
  ])('%j begins with six cron fields: %s', (words, six) => {
    expect(startsWithSixCronFields(words)).toBe(six);
  });

  it.each([
    ['every 0 minutes', 'from 1 minute to 24 hours'],
    ['every 25 hours', 'from 1 minute to 24 hours'],
    ['every blursday at 9:00', '"blursday" is not a day'],
    ['every day at 25:00', 'is not a time of day'],
    ['every day at 9', 'is not a time of day'],
    ['every day at 13pm', 'is not a time of day'],
    ['every day at 9:60', 'is not a time of day'],
    ['60 * * * *', 'Cron minute "60"'],
    ['* 24 * * *', 'Cron hour "24"'],
    ['* * 0 * *', 'Cron day of month "0"'],
    ['* * * 13 *', 'Cron month "13"'],
    ['* * * * 8', 'Cron day of week "8"'],
    ['*/0 * * * *', 'is not a step'],
    ['5-1 * * * *', 'is not a value or range'],
    ['* * * * funday', 'is not a value or range'],
    ['tomorrow', 'I did not understand "tomorrow"'],
    ['', 'I did not understand'],
    ['* * * *', 'I did not understand'],
    ['* * * * * * *', 'I did not understand'],
    ['30 0 9 * * 1-5', 'Cron seconds "30": schedules run on the minute'],
    ['*/10 * * * * *', 'Cron seconds "*/10"'],
    ['0 0 25 * * *', 'Cron hour "25"'],
  ])('refuses "%s", saying %s', (text, problem) => {
    const parsed = parseRule(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});

describe('validTimeZone', () => {
  it('knows IANA zones and UTC, not made-up ones', () => {
    expect(validTimeZone('UTC')).toBe(true);
    expect(validTimeZone('Europe/Paris')).toBe(true);
    expect(validTimeZone('America/New_York')).toBe(true);
    expect(validTimeZone('Mars/Olympus')).toBe(false);
    expect(validTimeZone('')).toBe(false);
  });
});

describe('nextTick', () => {
  it('runs intervals on the clock, counted from midnight UTC', () => {
    expect(next('every minute', 'UTC', '2026-11-26T10:00:30Z')).toBe('2026-11-26T10:01:00.000Z');
    expect(next('every 15 minutes', 'Asia/Tokyo', '2026-11-26T10:07:00Z')).toBe(
      '2026-11-26T10:15:00.000Z',
    );
    expect(next('every hour', 'UTC', '2026-11-26T10:00:00Z')).toBe('2026-11-26T11:00:00.000Z');
  });

  it('reads the time in the zone: 9:00 in Paris is 8:00 UTC in winter, 7:00 in summer', () => {
    expect(next('every day at 9:00', 'Europe/Paris', '2026-11-26T07:59:00Z')).toBe(
      '2026-11-26T08:00:00.000Z',
    );
    expect(next('every day at 9:00', 'Europe/Paris', '2026-11-26T08:00:00Z')).toBe(
      '2026-11-27T08:00:00.000Z',
    );
    expect(next('every day at 9:00', 'Europe/Paris', '2026-07-01T06:00:00Z')).toBe(
      '2026-07-01T07:00:00.000Z',
    );
  });

  it('skips weekends for a weekday rule, and counts days in the zone, not in UTC', () => {
    // Friday 2026-11-27 23:30 in New York is Saturday 04:30 UTC: the next weekday is Monday.
    expect(next('every weekday at 9:00', 'America/New_York', '2026-11-28T04:30:00Z')).toBe(
      '2026-11-30T14:00:00.000Z',
    );
    // Monday 2026-11-30 08:00 in Tokyo is still Sunday in UTC.
    expect(next('every monday at 9:00', 'Asia/Tokyo', '2026-11-29T23:00:00Z')).toBe(
      '2026-11-30T00:00:00.000Z',
    );
  });

  it('has no tick at a time a DST change skips, and one at a time it repeats', () => {
    // 2026-03-29 in Paris: 2:00 becomes 3:00, so 2:30 does not exist that day.
    expect(next('every day at 2:30', 'Europe/Paris', '2026-03-28T02:00:00Z')).toBe(
      '2026-03-30T00:30:00.000Z',
    );
    // 2026-10-25 in Paris: 3:00 becomes 2:00, so 2:30 happens twice; it runs at the first.
    expect(next('every day at 2:30', 'Europe/Paris', '2026-10-24T12:00:00Z')).toBe(
      '2026-10-25T00:30:00.000Z',
    );
    expect(next('every day at 2:30', 'Europe/Paris', '2026-10-25T00:30:00Z')).toBe(
      '2026-10-26T01:30:00.000Z',
    );
  });

  it('applies cron day rules: either day field when both are set, leap days years apart', () => {
    // The 13th, or a Friday: Friday 2026-11-27 comes before the 13th of December.
    expect(next('0 12 13 * fri', 'UTC', '2026-11-26T00:00:00Z')).toBe('2026-11-27T12:00:00.000Z');
    expect(next('0 0 29 2 *', 'UTC', '2026-11-26T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    expect(next('0 0 30 2 *', 'UTC', '2026-11-26T00:00:00Z')).toBeUndefined();
  });
});

describe('latestTick', () => {
  it('is the one latest tick missed, however many were', () => {
    expect(latest('every minute', 'UTC', '2026-11-26T10:00:00Z', '2026-11-26T10:02:30Z')).toBe(
      '2026-11-26T10:02:00.000Z',
    );
    expect(
      latest(
        'every weekday at 9:00',
        'Europe/Paris',
        '2026-11-20T08:00:00Z',
        '2026-11-26T12:00:00Z',
      ),
    ).toBe('2026-11-26T08:00:00.000Z');
  });

  it('is the tick at `now` itself, and none at `after` or before it', () => {
    expect(latest('every minute', 'UTC', '2026-11-26T10:00:00Z', '2026-11-26T10:01:00Z')).toBe(
      '2026-11-26T10:01:00.000Z',
    );
    expect(
      latest('every minute', 'UTC', '2026-11-26T10:01:00Z', '2026-11-26T10:01:59Z'),
    ).toBeUndefined();
    expect(
      latest('every day at 9:00', 'UTC', '2026-11-26T09:00:00Z', '2026-11-27T08:59:00Z'),
    ).toBeUndefined();
  });

  it('finds a tick days back, and reads the day in the zone', () => {
    expect(
      latest('every monday at 9:00', 'Asia/Tokyo', '2026-11-01T00:00:00Z', '2026-11-29T23:00:00Z'),
    ).toBe('2026-11-23T00:00:00.000Z');
    expect(latest('0 0 29 2 *', 'UTC', '2020-01-01T00:00:00Z', '2026-11-26T00:00:00Z')).toBe(
      '2024-02-29T00:00:00.000Z',
    );
  });

  it('agrees with nextTick: the latest tick before the next one is the one before it', () => {
    const rules = ['every 7 minutes', '*/20 8-18 * * 1-5', 'every sunday at 23:45', '30 2 * * *'];
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata'];
    for (const text of rules)
      for (const zone of zones) {
        let now = at('2026-03-27T00:00:00Z');
        for (let i = 0; i < 20; i++) {
          const tick = nextTick(rule(text), zone, now)!;
          expect(latestTick(rule(text), zone, now, tick)).toEqual(tick);
          expect(latestTick(rule(text), zone, now, new Date(tick.getTime() - 1))).toBeUndefined();
          now = tick;
        }
      }
  });
});
