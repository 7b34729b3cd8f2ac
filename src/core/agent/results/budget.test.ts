import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyResultBudget, RESULTS_SHARE, roomForResults, shareOf, surelyFits } from './budget.ts';
import { originalLength } from './preview.ts';
import { previewMarker, previewSpans } from '../../markers.ts';

const budget = { maxChars: 1000, turnBudgetChars: 2500, headChars: 200, tailChars: 100 };
const text = (n: number, c = 'a') => (c.repeat(49) + '\n').repeat(Math.ceil(n / 50)).slice(0, n);

describe('applyResultBudget', () => {
  it('passes results within both budgets through unchanged', () => {
    const results = [{ toolCallId: 'a', content: text(900) }];
    expect(applyResultBudget(results, budget)).toEqual(results);
  });

  it('previews a single result over maxChars', () => {
    const [out] = applyResultBudget([{ toolCallId: 'a', content: text(5000) }], budget);
    expect(out!.content).toContain('[truncated — showing');
    expect(out!.content).toContain('/5000 chars');
    expect(out!.content.length).toBeLessThan(500);
  });

  it('cuts the largest results first until the turn fits', () => {
    const results = [
      { toolCallId: 'small', content: text(700, 's') },
      { toolCallId: 'big', content: text(990, 'b') },
      { toolCallId: 'mid', content: text(950, 'm') },
    ];
    const out = applyResultBudget(results, budget);
    expect(out[0]!.content).toBe(results[0]!.content);
    expect(out[1]!.content).toContain('tool_call_id="big"');
    expect(out[2]!.content).toBe(results[2]!.content);
    expect(out.reduce((n, r) => n + r.content.length, 0)).toBeLessThanOrEqual(2500);
  });

  it('counts what earlier batches of the turn spent', () => {
    const out = applyResultBudget([{ toolCallId: 'a', content: text(900) }], budget, 2000);
    expect(out[0]!.content).toContain('[truncated');
  });

  it('never cuts bounded results', () => {
    const page = { toolCallId: 'p', content: text(5000), bounded: true };
    expect(applyResultBudget([page], budget)[0]).toBe(page);
  });
});

describe('applyResultBudget within what the window can take (roomChars)', () => {
  const sizes = { maxChars: 20_000, turnBudgetChars: 200_000, headChars: 4_000, tailChars: 1_000 };
  const record = (i: number, chars: number) =>
    Array.from({ length: Math.ceil(chars / 20) }, (_, n) => `record ${i} line ${n}: nothing new\n`)
      .join('')
      .slice(0, chars);
  const step = (n: number, chars: number) =>
    Array.from({ length: n }, (_, i) => ({
      toolCallId: `call_${String(i).padStart(32, '0')}`,
      content: record(i, chars),
    }));
  const total = (rs: Array<{ content: string }>) => rs.reduce((n, r) => n + r.content.length, 0);

  it('shows each of 90 results of 2,000 chars as a preview of its share when together they do not fit', () => {
    const results = step(90, 2_000);
    const out = applyResultBudget(results, sizes, 0, 54_000);
    expect(total(out)).toBeLessThanOrEqual(54_000);
    for (const [i, r] of out.entries()) {
      const preview = previewSpans(r.content)!;
      expect(preview).toMatchObject({ toolCallId: results[i]!.toolCallId, total: 2_000 });
      // It shows its head and tail, and says where to read on.
      expect(results[i]!.content.startsWith(r.content.slice(0, preview.spans[0]![1]))).toBe(true);
      expect(preview.spans[0]![1]).toBeGreaterThan(0);
    }
  });

  it('shows each as one line naming it and how to read it when a share is too small for a preview', () => {
    const results = step(20, 2_000);
    const out = applyResultBudget(results, sizes, 0, 2_000);
    expect(out.map((r) => r.content)).toEqual(
      results.map((r) => previewMarker(r.toolCallId, 0, 2_000, 0)),
    );
  });

  it('previews a single result larger than the window to fit it', () => {
    const big = { toolCallId: 'call_big', content: record(0, 500_000) };
    const out = applyResultBudget([big], { ...sizes, maxChars: 1_000_000 }, 0, 6_000);
    expect(out[0]!.content.length).toBeLessThanOrEqual(6_000);
    expect(originalLength(out[0]!.content)).toBe(500_000);
  });

  it('leaves results that fit the room whole, and never cuts a page', () => {
    const results = step(3, 2_000);
    expect(applyResultBudget(results, sizes, 0, 6_000)).toEqual(results);
    const page = { toolCallId: 'p', content: record(9, 5_000), bounded: true };
    expect(applyResultBudget([page, ...results], sizes, 0, 1_000)[0]).toBe(page);
  });

  it('keeps every result, in order, whole or as a preview of itself, and within the room unless each is one line', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30_000 }), fc.boolean()), { maxLength: 40 }),
        fc.integer({ min: 0, max: 300_000 }),
        fc.integer({ min: 0, max: 250_000 }),
        (shape, room, used) => {
          const results = shape.map(([chars, bounded], i) => ({
            toolCallId: `call_${i}`,
            content: record(i, chars),
            ...(bounded ? { bounded } : {}),
          }));
          const out = applyResultBudget(results, sizes, used, room);
          expect(out.map((r) => r.toolCallId)).toEqual(results.map((r) => r.toolCallId));
          const cut = out.filter((r, i) => r.content !== results[i]!.content);
          for (const r of cut) {
            const i = out.indexOf(r);
            expect(results[i]!.bounded).toBeUndefined();
            expect(originalLength(r.content)).toBe(results[i]!.content.length);
            expect(previewSpans(r.content)?.toolCallId).toBe(r.toolCallId);
          }
          const available = Math.min(sizes.turnBudgetChars - used, room);
          const pages = total(results.filter((r) => r.bounded));
          const oneLineEach = cut.every((r) => r.content.startsWith('[truncated'));
          if (pages <= available && !oneLineEach)
            expect(total(out)).toBeLessThanOrEqual(Math.max(available, 0));
        },
      ),
    );
  });
});

describe('shareOf', () => {
  it('gives the shorter results whole and the rest an equal share: the most that fits', () => {
    expect(shareOf([100, 500, 2_000], 10_000)).toBe(Infinity);
    expect(shareOf([100, 500, 2_000], 1_100)).toBe(500);
    expect(shareOf([2_000, 2_000], 1_000)).toBe(500);
    expect(shareOf([5], -3)).toBe(0);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 200_000 }),
        (lengths, available) => {
          const share = shareOf(lengths, available);
          const taken = (cap: number) => lengths.reduce((n, l) => n + Math.min(l, cap), 0);
          expect(taken(share)).toBeLessThanOrEqual(available);
          if (Number.isFinite(share)) expect(taken(share + 1)).toBeGreaterThan(available);
        },
      ),
    );
  });
});

describe('roomForResults', () => {
  const room = { roomTokens: 20_000, callsTokens: 2_000, overheadTokens: 400, textTokens: 45_000 };

  it('is the results’ share of what the calls leave, at the chars a token their text holds', () => {
    expect(roomForResults({ ...room, textChars: 180_000 })).toBe(
      Math.floor((18_000 * RESULTS_SHARE - 400) * 4),
    );
    expect(roomForResults({ ...room, roomTokens: 1_000, textChars: 180_000 })).toBe(0);
    expect(roomForResults({ ...room, textChars: 0 })).toBe(Infinity);
  });

  it('never says results fit without measuring that need measuring', () => {
    expect(surelyFits(9_000, 10, 20_000)).toBe(true);
    expect(surelyFits(180_000, 91, 20_000)).toBe(false);
  });
});
