import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { previewMarker, previewSpans } from '../../markers.ts';
import { buildPreview, originalLength, previewWithin } from './preview.ts';

const numbered = (n: number) =>
  Array.from({ length: n }, (_, i) => `line ${String(i).padStart(5, '0')}`).join('\n');

describe('buildPreview', () => {
  const full = numbered(3000); // 3000 lines of 10 chars + breaks
  const preview = buildPreview(full, 'call_1', { headChars: 4000, tailChars: 1000 });

  it('keeps a head and tail cut at line breaks, with the marker between them', () => {
    const [head, rest] = preview.split('\n[truncated');
    expect(full.startsWith(head!)).toBe(true);
    expect(head!.length).toBeLessThanOrEqual(4000);
    expect(head!.endsWith('\n') || head!.endsWith('line 00363')).toBe(true);
    const tail = rest!.slice(rest!.indexOf(']\n') + 2);
    expect(full.endsWith(tail)).toBe(true);
    expect(tail.startsWith('line ')).toBe(true);
    expect(tail.length).toBeLessThanOrEqual(1000);
  });

  it('writes the marker in the exact documented form, pointing just past the head', () => {
    const head = preview.slice(0, preview.indexOf('\n[truncated'));
    const tail = preview.slice(preview.indexOf(']\n') + 2);
    const marker = previewMarker('call_1', head.length + tail.length, full.length, head.length);
    expect(preview).toBe(`${head}\n${marker}\n${tail}`);
    expect(marker).toBe(
      `[truncated — showing ${head.length + tail.length}/${full.length} chars. Read on with get_continuation(tool_call_id="call_1", offset=${head.length}), or give it a pattern to find lines anywhere in the result.]`,
    );
  });

  it('names the full length, which later compaction reads back', () => {
    expect(originalLength(preview)).toBe(full.length);
    expect(originalLength('plain text')).toBe(10);
  });

  it('points a preview of a preview at the same original', () => {
    const again = buildPreview(preview, 'call_1', { headChars: 2000, tailChars: 500 });
    expect(originalLength(again)).toBe(full.length);
    const offset = Number(/offset=(\d+)/.exec(again)![1]);
    expect(full.slice(0, offset)).toBe(again.slice(0, offset));
  });
});

describe('previewWithin', () => {
  const full = numbered(3000);

  it('is a preview no longer than asked, head and tail in the sizes’ proportion, of the same original', () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 40_000 }), (chars) => {
        const preview = previewWithin(full, 'call_1', chars, { headChars: 4000, tailChars: 1000 });
        expect(preview.length).toBeLessThanOrEqual(chars);
        expect(originalLength(preview)).toBe(full.length);
        const [[, head], tail] = previewSpans(preview)!.spans as [
          [number, number],
          [number, number],
        ];
        expect(full.startsWith(preview.slice(0, head))).toBe(true);
        expect(head).toBeGreaterThanOrEqual(tail[1] - tail[0]);
      }),
    );
  });

  it('is one line naming the result and how to read it when its text would be shorter than that line', () => {
    expect(previewWithin(full, 'call_1', 300, { headChars: 4000, tailChars: 1000 })).toBe(
      previewMarker('call_1', 0, full.length, 0),
    );
  });
});
