import { describe, expect, it } from 'vitest';
import { wellFormed } from './well-formed.ts';

describe('wellFormed', () => {
  it('replaces lone surrogates and NUL with U+FFFD, one unit for one, and keeps pairs', () => {
    const text = 'a\ud83d\ude00b\ud83dc\ude00d\u0000e\udc00\ud800';
    const fixed = wellFormed(text);
    expect(fixed).toBe('a\ud83d\ude00b\ufffdc\ufffdd\ufffde\ufffd\ufffd');
    expect(fixed.length).toBe(text.length);
    expect(() => encodeURIComponent(fixed)).not.toThrow();
    expect(wellFormed('plain 😀 text')).toBe('plain 😀 text');
  });
});
