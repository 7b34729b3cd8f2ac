import { describe, expect, it } from 'vitest';
import type { UsageRow } from '../../ports/spend.ts';
import { reportStart, usageReport } from './usage-report.ts';

// A Wednesday: the week began on Monday the 23rd.
const now = new Date('2026-11-25T15:00:00Z');
const row = (
  day: string,
  channel: string,
  user: string | undefined,
  tokens: number,
  cost = 0,
  unpriced = 0,
): UsageRow => ({
  day,
  channel,
  model: 'gpt-test',
  ...(user ? { user } : {}),
  tokens,
  cost,
  unpriced,
});
const names = { channel: (id: string) => `<#${id}>`, person: (id: string) => `<@${id}>` };

describe('usageReport', () => {
  const rows = [
    row('2026-11-25', 'C1', 'U1', 1_000, 0.5),
    row('2026-11-24', 'C2', 'U2', 2_000, 1),
    row('2026-11-23', 'C1', 'U2', 4_000, 2),
    row('2026-11-22', 'C1', 'U1', 8_000, 4),
    row('2026-11-01', 'C2', undefined, 16_000, 8),
    row('2026-10-30', 'C1', 'U1', 32_000, 16),
  ];

  it('sums today, the week from Monday and the month from the 1st (UTC), by channel and, for an admin, by person', () => {
    const { text } = usageReport(rows, { now, everyone: true, currency: 'USD', ...names });
    expect(text.split('\n')).toEqual([
      '*Usage in this workspace* (everyone’s: you are an admin)',
      'Today: 1,000 tokens · 0.50 USD',
      'This week: 7,000 tokens · 3.50 USD',
      'This month: 31,000 tokens · 15.50 USD',
      '',
      '*This month by channel*',
      '• <#C2>: 18,000 tokens · 9.00 USD',
      '• <#C1>: 13,000 tokens · 6.50 USD',
      '',
      '*This month by person*',
      '• before people were kept: 16,000 tokens · 8.00 USD',
      '• <@U1>: 9,000 tokens · 4.50 USD',
      '• <@U2>: 6,000 tokens · 3.00 USD',
    ]);
  });

  it("gives a person no one else's usage, says where a price is unknown, and what is counted without prices", () => {
    const own = usageReport([row('2026-11-25', 'C1', 'U1', 500, 0, 2)], {
      now,
      everyone: false,
      currency: 'USD',
      ...names,
    });
    expect(own.text).toContain('*Your usage here*');
    expect(own.text).toContain('Today: 500 tokens · price unknown');
    expect(own.text).not.toContain('by person');
    const unpriced = usageReport(rows, { now, everyone: false, ...names });
    expect(unpriced.text).toContain('Today: 1,000 tokens\n');
    expect(unpriced.text).toContain('only tokens are counted');
  });

  it('lists the ten biggest and sums the rest', () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      row('2026-11-25', `C${i}`, 'U1', 100 * (i + 1)),
    );
    const lines = usageReport(many, { now, everyone: false, ...names }).text.split('\n');
    expect(lines.filter((l) => l.startsWith('• <#'))).toHaveLength(10);
    expect(lines).toContain('• 2 more: 300 tokens');
  });

  it('charts each of the last 30 days, the empty ones at zero', () => {
    const { days } = usageReport(rows, { now, everyone: true, currency: 'USD', ...names });
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual({ day: '2026-10-27', tokens: 0, cost: 0 });
    expect(days.find((d) => d.day === '2026-10-30')).toEqual({
      day: '2026-10-30',
      tokens: 32_000,
      cost: 16,
    });
    expect(days.at(-1)).toEqual({ day: '2026-11-25', tokens: 1_000, cost: 0.5 });
    expect(reportStart(now)).toEqual(new Date('2026-10-27T15:00:00Z'));
  });
});
