import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { previewMarker, previewSpans } from '../../markers.ts';
import type { Message } from '../../ports/conversation.ts';
import { buildPreview, originalLength, previewedResults, previewWithin } from './preview.ts';

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

describe('previewedResults', () => {
  const full = numbered(3000);
  const preview = (id: string) => buildPreview(full, id, { headChars: 400, tailChars: 100 });
  const calls = (turn: number, ...names: Array<[string, string]>): Message => ({
    role: 'assistant',
    content: '',
    toolCalls: names.map(([id, name]) => ({ id, name, arguments: '{}' })),
    turn,
  });
  const result = (turn: number, toolCallId: string, content: string): Message => ({
    role: 'tool',
    toolCallId,
    content,
    turn,
  });

  it("names the turn's results sent as previews of their own calls, in order, with their tools", () => {
    const transcript: Message[] = [
      { role: 'user', content: 'earlier', turn: 1 },
      calls(1, ['call_old', 'listing']),
      result(1, 'call_old', preview('call_old')),
      { role: 'user', content: 'now', turn: 2 },
      calls(2, ['call_a', 'listing'], ['call_b', 'status'], ['call_c', 'echo']),
      result(2, 'call_a', preview('call_a')),
      result(2, 'call_b', 'all green'),
      // A result that only looks like a preview, of another call: it was sent whole.
      result(2, 'call_c', preview('call_a')),
      calls(2, ['call_d', 'grep']),
      result(2, 'call_d', preview('call_d')),
      { role: 'assistant', content: 'done', turn: 2 },
    ];
    expect(previewedResults(transcript, 2)).toEqual([
      { toolCallId: 'call_a', toolName: 'listing' },
      { toolCallId: 'call_d', toolName: 'grep' },
    ]);
    expect(previewedResults(transcript, 3)).toEqual([]);
  });
});
