import { describe, expect, it } from 'vitest';
import {
  codePointBoundary,
  countLines,
  headAtLineBreak,
  safeSlice,
  tailAtLineBreak,
} from './text.ts';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('surrogate-safe cutting', () => {
  const text = 'ab😀cd😀';

  it('never ends a slice between the halves of a pair', () => {
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) expect(safeSlice(text, i, j)).not.toMatch(LONE);
    }
  });

  it('moves a boundary inside a pair back to the pair start', () => {
    expect(codePointBoundary(text, 3)).toBe(2);
    expect(codePointBoundary(text, 4)).toBe(4);
    expect(codePointBoundary(text, 99)).toBe(text.length);
  });

  it('survives JSON round trips for every cut of an emoji string', () => {
    const emoji = '🚀'.repeat(50);
    for (let n = 0; n < emoji.length; n++) {
      const cut = headAtLineBreak(emoji, n) + tailAtLineBreak(emoji, n);
      expect(JSON.parse(JSON.stringify(cut))).not.toMatch(LONE);
    }
  });
});

describe('line-aware head and tail', () => {
  const text = 'line one\nline two\nline three\nline four\n';

  it('cuts the head back to the last line break', () => {
    expect(headAtLineBreak(text, 12)).toBe('line one\n');
  });

  it('cuts the tail forward past the first line break', () => {
    expect(tailAtLineBreak(text, 14)).toBe('line four\n');
  });

  it('keeps a raw cut when the window holds no line break', () => {
    expect(headAtLineBreak('abcdefgh', 3)).toBe('abc');
    expect(tailAtLineBreak('abcdefgh', 3)).toBe('fgh');
  });

  it('returns the whole text when it fits', () => {
    expect(headAtLineBreak('a\nb', 10)).toBe('a\nb');
    expect(tailAtLineBreak('a\nb', 10)).toBe('a\nb');
  });

  it('counts lines with or without a trailing break', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\nb\n')).toBe(2);
    expect(countLines('a\nb\nc')).toBe(3);
  });
});
