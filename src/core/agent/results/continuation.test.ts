import { describe, expect, it } from 'vitest';
import { parseContinuationArgs, readContinuationPage } from './continuation.ts';

describe('readContinuationPage', () => {
  const full = 'x'.repeat(250);

  it('returns one chunk and a marker naming the next offset', () => {
    expect(readContinuationPage(full, 'c1', 100, 100).content).toBe(
      `${'x'.repeat(100)}\n[showing 100-200/250 chars of "c1". Read on with get_continuation(tool_call_id="c1", offset=200), or give it a pattern to find lines anywhere in the result.]`,
    );
  });

  it('says of the last chunk that it is the end', () => {
    expect(readContinuationPage(full, 'c1', 200, 100).content).toBe(
      `${'x'.repeat(50)}\n[showing 200-250/250 chars of "c1": the end of it.]`,
    );
  });

  it('answers an offset past the end with a JSON error', () => {
    expect(JSON.parse(readContinuationPage(full, 'c1', 250, 100).content)).toEqual({
      error: 'offset 250 is past the end of the result',
      tool_call_id: 'c1',
      total_chars: 250,
    });
  });

  it('pages an emoji text without splitting pairs, and the pages rebuild it exactly', () => {
    const emoji = 'a' + '😀'.repeat(40);
    let offset = 0;
    let rebuilt = '';
    for (let guard = 0; guard < 100; guard++) {
      const page = readContinuationPage(emoji, 'e', offset, 7).content;
      const next = /offset=(\d+)\), or give it a pattern[^\]]*\]$/.exec(page);
      rebuilt += page.slice(0, page.lastIndexOf('\n[showing'));
      if (!next) break;
      offset = Number(next[1]);
    }
    expect(rebuilt).toBe(emoji);
  });
});

describe('parseContinuationArgs', () => {
  it('accepts an id and a non-negative integer offset', () => {
    expect(parseContinuationArgs({ tool_call_id: 'a', offset: 0 })).toEqual({
      toolCallId: 'a',
      offset: 0,
    });
  });

  it.each([
    [{ offset: 0 }, /tool_call_id/],
    [{ tool_call_id: 'a', offset: -1 }, /non-negative integer/],
    [{ tool_call_id: 'a', offset: 1.5 }, /non-negative integer/],
    [{ tool_call_id: 'a', offset: '10' }, /non-negative integer/],
  ])('rejects %j', (args, message) => {
    const parsed = parseContinuationArgs(args);
    expect('error' in parsed && parsed.error).toMatch(message);
  });
});
