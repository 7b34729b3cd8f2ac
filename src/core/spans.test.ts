import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstGap, spanChars, subtract, unite, type Span } from './spans.ts';

const span = fc
  .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }))
  .map(([a, b]): Span => [Math.min(a, b), Math.max(a, b)]);
const covers = (spans: readonly Span[], at: number) => spans.some(([a, b]) => a <= at && at < b);

describe('spans', () => {
  it('unite merges touching and overlapping spans, in order', () => {
    expect(
      unite([
        [10, 20],
        [0, 5],
        [5, 8],
        [15, 30],
        [40, 40],
      ]),
    ).toEqual([
      [0, 8],
      [10, 30],
    ]);
  });

  it('subtract leaves the parts not covered', () => {
    expect(
      subtract(
        [0, 100],
        [
          [10, 20],
          [50, 120],
        ],
      ),
    ).toEqual([
      [0, 10],
      [20, 50],
    ]);
    expect(subtract([10, 20], [[0, 30]])).toEqual([]);
  });

  it('firstGap finds the next offset not in view, wrapping to the start', () => {
    expect(firstGap([[0, 100]], 100, 300)).toBe(100);
    expect(
      firstGap(
        [
          [0, 100],
          [200, 300],
        ],
        100,
        300,
      ),
    ).toBe(100);
    expect(firstGap([[50, 300]], 300, 300)).toBe(0);
    expect(firstGap([[0, 300]], 120, 300)).toBeUndefined();
  });

  it('agree with a character-by-character model', () => {
    fc.assert(
      fc.property(fc.array(span, { maxLength: 6 }), span, (spans, one) => {
        const united = unite(spans);
        const left = subtract(one, united);
        // Compared as plain booleans, one expect a property: 120,000 expects took over the
        // 5 s timeout on a busy 2-core machine.
        const wrong = Array.from({ length: 60 }, (_, at) => at).filter(
          (at) =>
            covers(united, at) !== covers(spans, at) ||
            covers(left, at) !== (covers([one], at) && !covers(spans, at)),
        );
        expect(wrong).toEqual([]);
        expect(spanChars(united)).toBe(
          Array.from({ length: 60 }, (_, at) => covers(spans, at)).filter(Boolean).length,
        );
      }),
      { numRuns: 2_000 },
    );
  });
});
