import { describe, expect, it } from 'vitest';
import { CHUNK_CHARS, indexPieces } from './result-index.ts';

describe('indexPieces', () => {
  it('cuts a text into pieces that cover it, each reading on into the next, without splitting a character', () => {
    // Emoji (two UTF-16 units each) throughout, so that a cut at a fixed size would split some.
    const text = Array.from({ length: 30_000 }, (_, i) =>
      i % 7 === 0 ? '😀' : String.fromCharCode(97 + (i % 26)),
    ).join('');
    const pieces = indexPieces(text);
    expect(pieces[0]!.start_offset).toBe(0);
    for (const [i, p] of pieces.entries()) {
      expect(text.slice(p.start_offset).startsWith(p.body)).toBe(true);
      expect(p.body).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
      const next = pieces[i + 1];
      if (next) {
        expect(next.start_offset - p.start_offset).toBeGreaterThanOrEqual(CHUNK_CHARS - 1);
        // Reads on past the next piece's start, so a word cut there is whole in this one.
        expect(p.start_offset + p.body.length).toBeGreaterThanOrEqual(next.start_offset + 199);
      } else {
        expect(p.start_offset + p.body.length).toBe(text.length);
      }
    }
  });

  it('gives an empty result one empty piece, so its tool name is still indexed', () => {
    expect(indexPieces('')).toEqual([{ start_offset: 0, body: '' }]);
  });
});
