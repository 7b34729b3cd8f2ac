import { describe, expect, it, vi } from 'vitest';
import { clearedResultLine, detectContentType, microcompact } from './microcompact.ts';
import type { Message } from '../../ports/conversation.ts';

const options = {
  truncateTurns: 2,
  summarizeTurns: 4,
  minChars: 3000,
  headChars: 2000,
  tailChars: 500,
};
const big = (prefix: string) =>
  prefix + Array.from({ length: 500 }, (_, i) => `row ${i} ${'z'.repeat(40)}`).join('\n');
const tool = (turn: number, content: string, id = `call_${turn}`): Message => ({
  role: 'tool',
  toolCallId: id,
  content,
  turn,
});

describe('microcompact', () => {
  // Turn 7 is a turn at which tiers move (every TRUNCATE_TURNS turns: 1, 3, 5, 7, …).
  const history = [1, 2, 3, 4, 5, 6, 7].map((t) => tool(t, big('package main\n')));
  const out = microcompact(history, 7, options);

  it('leaves results of the current and previous turn untouched', () => {
    expect(out[6]).toBe(history[6]);
    expect(out[5]).toBe(history[5]);
  });

  it('cuts results TRUNCATE_TURNS old to head 2000 + tail 500', () => {
    for (const i of [4, 3]) {
      expect(out[i]!.content).toContain('[truncated — showing');
      expect(out[i]!.content.length).toBeLessThan(2000 + 500 + 200);
    }
  });

  it('replaces results SUMMARIZE_TURNS old with one line', () => {
    const line = out[2]!.content;
    expect(line).toMatch(
      /^\[Old tool result cleared -- 501 lines, \d+K chars, Go source; call get_continuation\(tool_call_id="call_3", offset=0\) to read it again\]$/,
    );
    expect(out[0]!.content).toContain('tool_call_id="call_1"');
    expect(out[1]!.content).toContain('tool_call_id="call_2"');
  });

  it('never touches small results', () => {
    const small = tool(1, 'short');
    expect(microcompact([small], 10, options)[0]).toBe(small);
  });

  it('moves results to their next tier together, every TRUNCATE_TURNS turns, so the prefix holds in between', () => {
    const again = microcompact(history, 7, options);
    expect(again.map((m) => m.content)).toEqual(out.map((m) => m.content));
    // Turn 8 changes nothing that turn 7 sent: the request only grows.
    const next = microcompact([...history, tool(8, big('x'))], 8, options);
    expect(next.slice(0, 7).map((m) => m.content)).toEqual(out.map((m) => m.content));
    // Turn 9 moves turns 6 and 7 to the truncate tier, and turns 4 and 5 to one line, at once.
    const moved = microcompact([...history, tool(8, big('x'))], 9, options);
    expect(
      moved.map((m) =>
        m.content.startsWith('[Old tool result cleared')
          ? 'cleared'
          : m.content.includes('[truncated')
            ? 'cut'
            : 'whole',
      ),
    ).toEqual(['cleared', 'cleared', 'cleared', 'cleared', 'cleared', 'cut', 'cut', 'whole']);
  });

  it('parses and counts a result once per tier, and the remembered form is what a fresh compaction gives', () => {
    const json = tool(
      1,
      JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ row: i, text: 'x'.repeat(20) }))),
    );
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const first = microcompact([json], 9, options)[0]!.content;
      const calls = parse.mock.calls.length;
      expect(calls).toBeGreaterThan(0);
      expect(microcompact([json], 10, options)[0]!.content).toBe(first);
      expect(parse.mock.calls.length).toBe(calls);
      expect(microcompact([{ ...json }], 9, options)[0]!.content).toBe(first);
    } finally {
      parse.mockRestore();
    }
  });

  it('describes a previewed result by its original size', () => {
    const preview = `head\n[truncated — showing 10/45000 chars. Call get_continuation with tool_call_id="x" offset=5 to read more]\ntail${'y'.repeat(3000)}`;
    expect(clearedResultLine('x', preview)).toBe(
      '[Old tool result cleared -- 45K chars, text; call get_continuation(tool_call_id="x", offset=0) to read it again]',
    );
  });
});

describe('detectContentType', () => {
  it.each([
    ['{"a": 1}', 'JSON'],
    ['[1, 2]', 'JSON'],
    ['{not json', 'text'],
    ['package main', 'Go source'],
    ['def main():', 'Python source'],
    ['function x() {}', 'JavaScript source'],
    ['diff --git a b', 'diff'],
    ['--- a/file', 'diff'],
    ['commit 1234abcd', 'git log'],
    ['hello', 'text'],
  ])('%s → %s', (content, type) => {
    expect(detectContentType(content)).toBe(type);
  });
});
