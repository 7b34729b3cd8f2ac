import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StatusLine, statusText, waitingForApproval } from './status.ts';

describe('StatusLine', () => {
  const shown: Array<[number, string]> = [];
  let line: StatusLine;
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    shown.length = 0;
    line = new StatusLine(async (status) => void shown.push([Date.now(), status]), {
      intervalMs: 1_000,
      refreshMs: 90_000,
    });
  });
  afterEach(() => {
    line.stop();
    vi.useRealTimers();
  });

  it('shows nothing for the first second, then at most one status a second, the latest one', () => {
    line.set('thinking');
    line.set('running a');
    line.set('running b');
    vi.advanceTimersByTime(999);
    expect(shown).toEqual([]);
    vi.advanceTimersByTime(1);
    line.set('running c');
    vi.advanceTimersByTime(2_500);
    expect(shown).toEqual([
      [1_000, 'running b'],
      [2_000, 'running c'],
    ]);
  });

  it('shows the status again before Slack drops it, and nothing once stopped', () => {
    line.set('thinking');
    vi.advanceTimersByTime(91_000);
    expect(shown).toEqual([
      [1_000, 'thinking'],
      [91_000, 'thinking'],
    ]);
    line.set('running a');
    vi.advanceTimersByTime(1_000);
    line.stop();
    line.set('running b');
    vi.advanceTimersByTime(200_000);
    expect(shown).toEqual([
      [1_000, 'thinking'],
      [91_000, 'thinking'],
      [92_000, 'running a'],
    ]);
  });

  it('shows nothing for a turn that ends within the first second', () => {
    line.set('thinking');
    line.set('running a');
    vi.advanceTimersByTime(500);
    line.stop();
    vi.advanceTimersByTime(200_000);
    expect(shown).toEqual([]);
  });
});

it('statusText says what the turn does, with a running tool’s own words and share done', () => {
  expect(statusText({ kind: 'model', afterTools: true })).toBe('writing the answer');
  expect(statusText({ kind: 'tool', name: 'ops__deploy', reading: false })).toBe(
    'running ops__deploy',
  );
  expect(statusText({ kind: 'tool', name: 'get_continuation', reading: true })).toBe(
    'reading stored results',
  );
  expect(
    statusText({
      kind: 'progress',
      name: 'ops__deploy',
      progress: { progress: 3, total: 7, message: 'copying files' },
    }),
  ).toBe('running ops__deploy: copying files (43%)');
});

it('statusText names the page a turn reads of a stored result, or what it looks for in it', () => {
  expect(
    statusText({
      kind: 'reading',
      name: 'get_continuation',
      read: { from: 40_000, to: 60_000, of: 200_000 },
    }),
  ).toBe('reading page 3 of 10 of a stored result (characters 40,000–60,000 of 200,000)');
  // A page that takes the rest at once is the last, whatever its size.
  expect(
    statusText({
      kind: 'reading',
      name: 'get_continuation',
      read: { from: 20_000, to: 200_000, of: 200_000 },
    }),
  ).toBe('reading page 2 of 2 of a stored result (characters 20,000–200,000 of 200,000)');
  expect(
    statusText({
      kind: 'reading',
      name: 'get_continuation',
      read: { from: 0, to: 1_000, of: 1_000, pattern: 'timeout|refused' },
    }),
  ).toBe('searching a stored result (1,000 characters) for "timeout|refused"');
  const long = statusText({
    kind: 'reading',
    name: 'get_continuation',
    read: { from: 0, to: 5, of: 5, pattern: 'x'.repeat(500) },
  });
  expect(long.length).toBeLessThanOrEqual(100);
});

it('waitingForApproval names the calls and who may decide them', () => {
  expect(waitingForApproval(['ops__deploy'], ['U1'], 'slack')).toBe(
    'waiting for approval of ops__deploy from <@U1>',
  );
  expect(waitingForApproval(['a', 'b', 'a'], ['U1', 'U2', 'U3', 'U4'], 'discord')).toBe(
    'waiting for approval of a, b from <@U1>, <@U2> or 2 others',
  );
  expect(waitingForApproval(['ops__deploy'], undefined, 'slack')).toBe(
    'waiting for approval of ops__deploy',
  );
});
