import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHARS_A_TOKEN, pageChars, type PageRoom, type PageSizes } from './page-size.ts';

const room = fc.record(
  {
    restChars: fc.integer({ min: 1, max: 3_000_000 }),
    viewChars: fc.integer({ min: 250, max: 400_000 }),
    readChars: fc.integer({ min: 0, max: 500_000 }),
    roomTokens: fc.integer({ min: -10_000, max: 300_000 }),
    calls: fc.integer({ min: 1, max: 5 }),
  },
  { requiredKeys: ['restChars', 'viewChars', 'readChars', 'calls'] },
);
const sizes = fc.record(
  {
    chunkChars: fc.integer({ min: 1, max: 40_000 }),
    maxChunkChars: fc.integer({ min: 1, max: 300_000 }),
  },
  { requiredKeys: ['chunkChars'] },
);
/** What the page's share of the room holds in chars, with the window known. */
const share = (r: PageRoom) => (Math.max(0, r.roomTokens!) * CHARS_A_TOKEN) / r.calls;
/** The page before pages were sized by the window: the setting, else a preview's size. */
const fixedPage = (r: PageRoom, s: PageSizes) =>
  Math.min(r.viewChars, s.maxChunkChars ?? s.chunkChars);
/** How far a page of `chars` reads into the rest of the result. */
const reach = (chars: number, r: PageRoom) => Math.min(chars, r.restChars);

describe('pageChars', () => {
  it('with the window unknown, is the setting, else a preview’s size, within the view', () => {
    fc.assert(
      fc.property(room, sizes, (r, s) => {
        const unknown = { ...r, roomTokens: undefined };
        expect(pageChars(unknown, s)).toBe(fixedPage(unknown, s));
      }),
    );
  });

  it('is never smaller than before, nor larger than the view keeps or CONTINUATION_CHUNK_CHARS', () => {
    fc.assert(
      fc.property(room, sizes, (r, s) => {
        const page = pageChars(r, s);
        expect(page).toBeGreaterThanOrEqual(fixedPage(r, s));
        expect(page).toBeLessThanOrEqual(r.viewChars);
        if (s.maxChunkChars !== undefined) expect(page).toBeLessThanOrEqual(s.maxChunkChars);
      }),
    );
  });

  it('reads the rest in one page when its share of the room and what the turn’s budget has left hold it', () => {
    const fitting = room
      .filter((r) => Math.min(share(r), r.viewChars - r.readChars) >= 1)
      .chain((r) =>
        fc
          .integer({ min: 1, max: Math.floor(Math.min(share(r), r.viewChars - r.readChars)) })
          .map((restChars) => ({ ...r, restChars })),
      );
    fc.assert(
      fc.property(fitting, fc.integer({ min: 1, max: 40_000 }), (r, chunkChars) => {
        expect(pageChars(r, { chunkChars })).toBeGreaterThanOrEqual(r.restChars);
      }),
    );
  });

  it('is larger than before only to read the whole rest, which then fits the room and the budget', () => {
    fc.assert(
      fc.property(room, sizes, (r, s) => {
        const page = pageChars(r, s);
        if (page === fixedPage(r, s)) return;
        expect(page).toBe(r.restChars);
        expect(page).toBeLessThanOrEqual(share(r));
        expect(page + r.readChars).toBeLessThanOrEqual(r.viewChars);
      }),
    );
  });

  it('never reads less for more room, nor more for more read already', () => {
    fc.assert(
      fc.property(room, sizes, fc.integer({ min: 0, max: 100_000 }), (r, s, more) => {
        fc.pre(r.roomTokens !== undefined);
        const page = reach(pageChars(r, s), r);
        const wider = { ...r, roomTokens: r.roomTokens! + more };
        expect(reach(pageChars(wider, s), r)).toBeGreaterThanOrEqual(page);
        const further = { ...r, readChars: r.readChars + more };
        expect(reach(pageChars(further, s), r)).toBeLessThanOrEqual(page);
      }),
    );
  });

  it('reads the seed transcript’s rest in one page in a 128k window', () => {
    // The seed case: a 4,000-char preview showed its first 2,800 chars of 24,591.
    const seed = { restChars: 24_591 - 2_800, viewChars: 200_000, readChars: 0, calls: 1 };
    const sizes = { chunkChars: 3_500 };
    expect(pageChars({ ...seed, roomTokens: 120_000 }, sizes)).toBe(21_791);
    expect(pageChars(seed, sizes)).toBe(3_500);
    expect(pageChars({ ...seed, roomTokens: 120_000 }, { ...sizes, maxChunkChars: 10_000 })).toBe(
      10_000,
    );
  });

  it('shares the room among the step’s calls', () => {
    const wide = { restChars: 100_000, viewChars: 200_000, readChars: 0, roomTokens: 100_000 };
    expect(pageChars({ ...wide, calls: 1 }, { chunkChars: 3_500 })).toBe(100_000);
    expect(pageChars({ ...wide, calls: 2 }, { chunkChars: 3_500 })).toBe(3_500);
  });

  it('reads on as before when the rest would make earlier pages give way', () => {
    const big = { restChars: 150_000, viewChars: 200_000, roomTokens: 120_000, calls: 1 };
    expect(pageChars({ ...big, readChars: 50_000 }, { chunkChars: 3_500 })).toBe(150_000);
    expect(pageChars({ ...big, readChars: 50_001 }, { chunkChars: 3_500 })).toBe(3_500);
  });

  it('with no room left, is a preview-sized page', () => {
    const full = { restChars: 100_000, viewChars: 200_000, readChars: 0, roomTokens: 0, calls: 1 };
    expect(pageChars(full, { chunkChars: 3_500 })).toBe(3_500);
    expect(pageChars({ ...full, roomTokens: -500 }, { chunkChars: 3_500 })).toBe(3_500);
  });
});
