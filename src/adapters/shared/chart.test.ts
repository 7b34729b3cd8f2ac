import { describe, expect, it } from 'vitest';
import { usageChartPng } from './chart.ts';

const days = Array.from({ length: 30 }, (_, i) => ({
  day: `2026-11-${String(i + 1).padStart(2, '0')}`,
  tokens: i % 7 === 0 ? 0 : 1_000 * i,
  cost: i * 0.01,
}));
const size = (png: Buffer) => [png.readUInt32BE(16), png.readUInt32BE(20)];

describe('usageChartPng', () => {
  it('renders the last 30 days as an 800×360 PNG, offline, with what was spent drawn', () => {
    const png = usageChartPng(days, 'USD');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect(size(png)).toEqual([800, 360]);
    // Bars and the spend line change the picture: neither is the empty chart.
    const empty = usageChartPng(
      days.map((d) => ({ ...d, tokens: 0, cost: 0 })),
      'USD',
    );
    expect(png.equals(empty)).toBe(false);
    expect(png.equals(usageChartPng(days))).toBe(false);
  });
});
