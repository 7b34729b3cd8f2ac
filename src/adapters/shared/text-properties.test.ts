/**
 * Properties of every helper that cuts text for the model or a platform, over generated text
 * full of emoji, line breaks and code fences: no cut splits a surrogate pair, no text is lost,
 * every piece is within its limit, and code fences stay balanced.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyResultBudget } from '../../core/agent/results/budget.ts';
import { readContinuationPage } from '../../core/agent/results/continuation.ts';
import { parsePage } from '../../core/markers.ts';
import { buildPreview } from '../../core/agent/results/preview.ts';
import { wellFormed } from '../../core/well-formed.ts';
import { splitMessage } from './split-message.ts';

const RUNS = 2_000;
const isWellFormed = (s: string) => wellFormed(s) === s;
const text = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('😀', '\n', '\n\n', '```ts\n', '\n```\n', 'é', 'x'.repeat(500)),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

describe('text helpers on generated text', () => {
  it('buildPreview keeps a head and a tail of the original, whole code points, with the offset of the head', () => {
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 200 }),
        (full, headChars, tailChars) => {
          const preview = buildPreview(full, 'id', { headChars, tailChars });
          expect(isWellFormed(preview)).toBe(true);
          const offset = Number(/offset=(\d+)\)/.exec(preview)![1]);
          expect(preview.startsWith(full.slice(0, offset))).toBe(true);
          const tail = preview.slice(preview.indexOf('result.]') + 'result.]'.length + 1);
          expect(full.endsWith(tail)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('readContinuationPage pages rebuild the result exactly, each within its size and whole code points', () => {
    fc.assert(
      fc.property(
        text.filter((t) => t.length > 0),
        fc.integer({ min: 1, max: 300 }),
        (full, chunk) => {
          let rebuilt = '';
          for (let offset = 0; offset < full.length;) {
            // Every page says where it lies, and the reading view reads that back.
            const page = parsePage(readContinuationPage(full, 'id', offset, chunk).content)!;
            expect(page.span[0]).toBe(offset);
            expect(page.total).toBe(full.length);
            expect(page.text.length).toBeLessThanOrEqual(Math.max(chunk, 2));
            expect(isWellFormed(page.text)).toBe(true);
            rebuilt += page.text;
            offset = page.span[1];
          }
          expect(rebuilt).toBe(full);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('applyResultBudget previews whole code points and never grows a result', () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 300, max: 2_000 }),
        (contents, budget) => {
          const results = contents.map((content, i) => ({ toolCallId: `c${i}`, content }));
          const out = applyResultBudget(results, {
            maxChars: 1_000,
            turnBudgetChars: budget,
            headChars: 400,
            tailChars: 100,
          });
          out.forEach((r, i) => {
            expect(isWellFormed(r.content)).toBe(true);
            expect(
              r.content === results[i]!.content ||
                r.content.length < results[i]!.content.length + 300,
            ).toBe(true);
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('splitMessage keeps every character, each chunk within the limit, whole code points, fences balanced', () => {
    const solid = (s: string) => s.replace(/^\s*(```|~~~).*$/gm, '').replace(/\s+/g, '');
    const fences = (s: string) => s.split('\n').filter((l) => /^\s*(```|~~~)/.test(l)).length;
    fc.assert(
      fc.property(text, fc.integer({ min: 40, max: 400 }), (markdown, limit) => {
        fc.pre(fences(markdown) % 2 === 0); // a reply whose own fences are balanced
        const chunks = splitMessage(markdown, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(isWellFormed(chunk)).toBe(true);
          expect(fences(chunk) % 2).toBe(0);
        }
        expect(solid(chunks.join('\n'))).toBe(solid(markdown));
      }),
      { numRuns: RUNS },
    );
  });
});
