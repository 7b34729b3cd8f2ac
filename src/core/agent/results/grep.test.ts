import { describe, expect, it } from 'vitest';
import { parseContinuationArgs } from './continuation.ts';
import { grepResult } from './grep.ts';

const log = Array.from(
  { length: 500 },
  (_, i) =>
    `${String(i).padStart(3, '0')} ${i % 50 === 7 ? 'ERROR disk full on /dev/sd' + i : 'ok request served'}`,
).join('\n');
const lines = (content: string) => content.split('\n').slice(1);
/** Every shown line's offset, checked against the text it claims to be from. */
function offsets(full: string, content: string): number[] {
  return lines(content)
    .filter((l) => l.startsWith('@'))
    .map((l) => {
      const at = Number(/^@(\d+): /.exec(l)![1]);
      expect(l.slice(l.indexOf(': ') + 2).replace(/^…/, '')).toContain(
        full.slice(at, at + 3).split('\n')[0],
      );
      return at;
    });
}

describe('grepResult', () => {
  it('returns each matching line with the offset of its match, case-insensitively', () => {
    const { content, isError } = grepResult(log, 'c1', 'error disk', 0);
    expect(isError).toBe(false);
    expect(content.split('\n')[0]).toBe(
      `10 matching lines for "error disk" (case-insensitive) in ${log.length} chars from offset 0:`,
    );
    const at = offsets(log, content);
    expect(at).toEqual([...log.matchAll(/ERROR disk/g)].map((m) => m.index));
    expect(lines(content)[0]).toBe(`@${at[0]}: 007 ERROR disk full on /dev/sd7`);
  });

  it('takes regular expressions, one hit per line', () => {
    const { content } = grepResult(log, 'c1', 'sd(7|57)$|^499', 0);
    expect(offsets(log, content)).toEqual([
      log.indexOf('sd7\n'),
      log.indexOf('sd57\n'),
      log.indexOf('499 '),
    ]);
  });

  it('matches a pattern that is not a valid regular expression literally, and says so', () => {
    const text = 'a call f(x\nanother f(x) here\nnone';
    const { content, isError } = grepResult(text, 'c1', 'f(x', 0);
    expect(isError).toBe(false);
    expect(content).toContain('(not a valid regular expression, so matched literally)');
    expect(offsets(text, content)).toEqual([7, text.indexOf('f(x)')]);
  });

  it('caps the lines shown, counts the rest, and names the call that shows the next ones', () => {
    const first = grepResult(log, 'c1', 'ok', 0, {
      maxMatches: 20,
      maxChars: 6_000,
      timeoutMs: 250,
    }).content;
    const total = log.split('\n').filter((l) => l.includes('ok')).length;
    expect(offsets(log, first)).toHaveLength(20);
    const next = Number(/offset=(\d+)\)\]$/.exec(first)![1]);
    expect(first).toMatch(
      new RegExp(
        `\\[${total - 20} more matching lines; the next: get_continuation\\(tool_call_id="c1", pattern="ok", offset=${next}\\)\\]$`,
      ),
    );
    // The next call starts on the line after the last one shown, so nothing is skipped or repeated.
    const second = grepResult(log, 'c1', 'ok', next).content;
    expect(offsets(log, second)[0]).toBeGreaterThan(offsets(log, first).at(-1)!);
    expect(second.split('\n')[0]).toContain(`${total - 20} matching lines`);
  });

  it('keeps an answer bounded when lines are huge, cutting each around its match', () => {
    const huge = `${'x'.repeat(100_000)} needle ${'y'.repeat(100_000)}\n`.repeat(30);
    const { content } = grepResult(huge, 'c1', 'needle', 0, {
      maxMatches: 20,
      maxChars: 6_000,
      timeoutMs: 250,
    });
    expect(content.length).toBeLessThan(6_000 + 400);
    expect(offsets(huge, content)).toHaveLength(20);
    expect(
      lines(content)
        .slice(0, 20)
        .every((l) => l.includes('needle')),
    ).toBe(true);
  });

  it('stops a pattern that backtracks catastrophically, with an error result, and keeps serving', () => {
    const text = `${'a'.repeat(40)}!`;
    const started = Date.now();
    const { content, isError } = grepResult(text, 'c1', '(a+)+$', 0, {
      maxMatches: 20,
      maxChars: 6_000,
      timeoutMs: 100,
    });
    expect(isError).toBe(true);
    expect(JSON.parse(content).error).toContain('took too long');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(grepResult(text, 'c1', 'a!', 0).content).toContain('1 matching lines');
  });

  it('says when nothing matches', () => {
    expect(grepResult(log, 'c1', 'zircon', 0).content).toBe(
      `0 matching lines for "zircon" (case-insensitive) in ${log.length} chars from offset 0:`,
    );
  });
});

describe('get_continuation arguments with a pattern', () => {
  it('accepts a pattern and refuses an empty or non-string one', () => {
    expect(parseContinuationArgs({ tool_call_id: 'c1', offset: 0, pattern: 'x' })).toEqual({
      toolCallId: 'c1',
      offset: 0,
      pattern: 'x',
    });
    expect(parseContinuationArgs({ tool_call_id: 'c1', offset: 0 })).toEqual({
      toolCallId: 'c1',
      offset: 0,
    });
    expect(parseContinuationArgs({ tool_call_id: 'c1', offset: 0, pattern: '' })).toEqual({
      error: 'pattern must be a non-empty string, got ""; leave it out to read a page',
    });
    expect(parseContinuationArgs({ tool_call_id: 'c1', offset: 0, pattern: 3 })).toEqual({
      error: 'pattern must be a non-empty string, got 3; leave it out to read a page',
    });
  });
});
