import { describe, expect, it } from 'vitest';
import { scheduleCommand } from './schedule-desk.ts';

describe('scheduleCommand', () => {
  it.each([
    ['list', { verb: 'list' }],
    ['cancel 12', { verb: 'cancel', id: '12' }],
    ['cancel #12', { verb: 'cancel', id: '12' }],
    ['', { verb: 'help' }],
    ['help', { verb: 'help' }],
    [
      '"every weekday at 9:00" Summarize yesterday\'s incidents',
      { verb: 'create', rule: 'every weekday at 9:00', prompt: "Summarize yesterday's incidents" },
    ],
    // Slack turns quotes into curly ones.
    ['“every day at 9:00” Hello', { verb: 'create', rule: 'every day at 9:00', prompt: 'Hello' }],
    [
      'every monday at 8:15 pm Weekly report',
      { verb: 'create', rule: 'every monday at 8:15 pm', prompt: 'Weekly report' },
    ],
    ['every 15 minutes Ping', { verb: 'create', rule: 'every 15 minutes', prompt: 'Ping' }],
    [
      '0 9 * * 1-5 Weekday notes\nwith two lines',
      { verb: 'create', rule: '0 9 * * 1-5', prompt: 'Weekday notes with two lines' },
    ],
    // Six fields, seconds first: all six are the rule, not five and a prompt beginning "1-5".
    [
      '0 0 9 * * 1-5 Weekday notes',
      { verb: 'create', rule: '0 0 9 * * 1-5', prompt: 'Weekday notes' },
    ],
    ['0 9 * * 1-5 Monday notes', { verb: 'create', rule: '0 9 * * 1-5', prompt: 'Monday notes' }],
    [
      '"0 9 * * 1-5" Weekday notes\nwith two lines',
      { verb: 'create', rule: '0 9 * * 1-5', prompt: 'Weekday notes\nwith two lines' },
    ],
  ])('reads %j', (words, expected) => {
    expect(scheduleCommand(words)).toEqual(expected);
  });

  it.each([
    ['"every day at 9:00"', 'What should run "every day at 9:00"?'],
    ['every day at 9:00', 'What should run'],
    ['"every fortnight" Hello', 'I did not understand "every fortnight"'],
    ['every blursday at 9:00 Hello', '"blursday" is not a day'],
    ['whenever you like', 'I did not understand'],
    // Out of range, quoted or not: the limit, said.
    ['every 48 hours Ping', '"every 48 hours": the interval must be from 1 minute to 24 hours.'],
    ['"every 48 hours" Ping', '"every 48 hours": the interval must be from 1 minute to 24 hours.'],
    ['every 0 minutes Ping', 'the interval must be from 1 minute to 24 hours'],
    ['30 0 9 * * 1-5 Weekday notes', 'Cron seconds "30": schedules run on the minute'],
  ])('says what is wrong with %j', (words, problem) => {
    const read = scheduleCommand(words);
    expect(read.verb).toBe('help');
    expect(read.verb === 'help' && read.problem).toContain(problem);
  });
});
