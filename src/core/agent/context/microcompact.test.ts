import { describe, expect, it, vi } from 'vitest';
import {
  aliasedCallId,
  clearedResultLine,
  detectContentType,
  microcompact,
  pastHorizon,
} from './microcompact.ts';
import type { Message } from '../../ports/conversation.ts';

const options = { minChars: 500, horizonTurns: 20, headChars: 2000, tailChars: 500 };
const big = (prefix: string) =>
  prefix + Array.from({ length: 500 }, (_, i) => `row ${i} ${'z'.repeat(40)}`).join('\n');

/** One turn: a question, a call and its result, a page of it read (derived), an answer. */
const turn = (t: number, result: string): Message[] => [
  { role: 'user', content: `question ${t}`, turn: t },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: `call_${t}`, name: 'read', arguments: `{"path":"f${t}"}` }],
    turn: t,
  },
  { role: 'tool', toolCallId: `call_${t}`, content: result, turn: t },
  {
    role: 'assistant',
    content: 'reading on',
    toolCalls: [{ id: `page_${t}`, name: 'get_continuation', arguments: '{}', derived: true }],
    turn: t,
  },
  { role: 'tool', toolCallId: `page_${t}`, content: `page of ${t}`, turn: t },
  { role: 'assistant', content: `answer ${t}`, turn: t },
];

describe('microcompact', () => {
  const history = [1, 2, 3].flatMap((t) => turn(t, big('package main\n')));
  const out = microcompact(history, 3, options);

  it('leaves the current turn untouched', () => {
    expect(out.slice(-6)).toEqual(history.slice(-6));
    expect(out.at(-4)).toBe(history.at(-4));
  });

  it("shows a finished turn's calls under short aliases, each result as one line that says how to read it again", () => {
    const first = out.slice(0, 5);
    expect(first.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'assistant',
    ]);
    expect(first[1]).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 't1c1', name: 'read', arguments: '{"path":"f1"}' }],
      turn: 1,
    });
    expect(first[2]).toMatchObject({ role: 'tool', toolCallId: 't1c1' });
    expect(first[2]!.content).toMatch(
      /^\[Old tool result cleared -- 501 lines, \d+K chars, Go source; get_continuation\(tool_call_id="t1c1", offset=0\) reads it again\]$/,
    );
    // The page read and its call are gone; the text the model said beside them stays.
    expect(first[3]).toEqual({ role: 'assistant', content: 'reading on', turn: 1 });
    expect(first[4]!.content).toBe('answer 1');
    expect(JSON.stringify(out)).not.toMatch(/page_[12]|call_[12]/);
  });

  it("numbers a turn's own calls in order, and the alias leads back to the stored id", () => {
    const two: Message[] = [
      { role: 'user', content: 'q', turn: 4 },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'x', arguments: '{}' },
          { id: 'p', name: 'get_continuation', arguments: '{}', derived: true },
          { id: 'b', name: 'y', arguments: '{}' },
        ],
        turn: 4,
      },
      { role: 'tool', toolCallId: 'a', content: 'A', turn: 4 },
      { role: 'tool', toolCallId: 'p', content: 'P', turn: 4 },
      { role: 'tool', toolCallId: 'b', content: 'B', turn: 4 },
    ];
    const shown = microcompact(two, 5, options);
    expect(
      shown.flatMap((m) => (m.role === 'tool' ? [`${m.toolCallId}=${m.content}`] : [])),
    ).toEqual(['t4c1=A', 't4c2=B']);
    expect(aliasedCallId(two, 't4c1')).toBe('a');
    expect(aliasedCallId(two, 't4c2')).toBe('b');
    expect(aliasedCallId(two, 't4c3')).toBeUndefined();
    expect(aliasedCallId(two, 'call_4')).toBeUndefined();
  });

  it('keeps small results whole', () => {
    const small = turn(1, 'short');
    expect(microcompact(small, 2, options)[2]!.content).toBe('short');
  });

  it('changes a turn once, when the next starts: every request keeps the one before up to its newest turn', () => {
    const at4 = [...history, ...turn(4, big('x'))];
    const next = microcompact(at4, 4, options);
    // Turn 3's request and turn 4's share everything up to turn 3's question.
    expect(JSON.stringify(next.slice(0, 11))).toBe(JSON.stringify(out.slice(0, 11)));
    expect(next[11]).not.toEqual(out[11]);
    // A finished turn keeps its form from then on.
    const finished = microcompact(at4, 5, options);
    const later = microcompact([...at4, ...turn(5, big('y'))], 5, options);
    expect(JSON.stringify(later.slice(0, finished.length))).toBe(JSON.stringify(finished));
  });

  it("cuts the current turn's results to head and tail only when asked, leaving pages to the reading view", () => {
    const cut = microcompact(history, 3, options, { cutCurrent: true, views: new Set(['page_3']) });
    expect(cut.at(-4)!.content).toContain('[truncated — showing');
    expect(cut.at(-4)!.content.length).toBeLessThan(2000 + 500 + 200);
    expect(cut.at(-2)).toBe(history.at(-2));
  });

  it('parses and counts a result once, and the remembered form is what a fresh compaction gives', () => {
    const json = JSON.stringify(
      Array.from({ length: 400 }, (_, i) => ({ row: i, text: 'x'.repeat(20) })),
    );
    const messages = turn(1, json);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const first = microcompact(messages, 9, options)[2]!.content;
      const calls = parse.mock.calls.length;
      expect(calls).toBeGreaterThan(0);
      expect(microcompact(messages, 10, options)[2]!.content).toBe(first);
      expect(parse.mock.calls.length).toBe(calls);
      expect(
        microcompact(
          messages.map((m) => ({ ...m })),
          9,
          options,
        )[2]!.content,
      ).toBe(first);
    } finally {
      parse.mockRestore();
    }
  });

  it('moves the horizon every horizonTurns turns, by that many turns at once', () => {
    expect([1, 20, 21, 40, 41, 60, 61].map((t) => pastHorizon(t, 20))).toEqual([
      0, 0, 0, 0, 20, 20, 40,
    ]);
    expect(pastHorizon(500, 0)).toBe(0);
  });

  it('takes the calls of turns past the horizon out, naming each in one note at the start', () => {
    const long = [1, 2, 3, 4, 5].flatMap((t) => turn(t, big('x')));
    const shown = microcompact(long, 5, { ...options, horizonTurns: 2 });
    expect(shown[0]!.role).toBe('user');
    expect(shown[0]!.content).toBe(
      '[Tools run in earlier turns of this thread, results stored (read one with get_continuation and its id):\nt1c1: read {"path":"f1"}\nt2c1: read {"path":"f2"}]',
    );
    expect(shown.slice(1, 7).map((m) => `${m.role}:${m.content}`)).toEqual([
      'user:question 1',
      'assistant:reading on',
      'assistant:answer 1',
      'user:question 2',
      'assistant:reading on',
      'assistant:answer 2',
    ]);
    // Turn 3 still has its call, under its alias; the note is the same until the horizon moves.
    expect(shown[8]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 't3c1' }] });
    const more = [...long, ...turn(6, big('y'))];
    const next = microcompact(more, 6, { ...options, horizonTurns: 2 });
    expect(JSON.stringify(next.slice(0, shown.length - 6))).toBe(
      JSON.stringify(shown.slice(0, -6)),
    );
  });

  it('describes a previewed result by its original size', () => {
    const preview = `head\n[truncated — showing 10/45000 chars. Call get_continuation with tool_call_id="x" offset=5 to read more]\ntail${'y'.repeat(3000)}`;
    expect(clearedResultLine('x', preview)).toBe(
      '[Old tool result cleared -- 45K chars, text; get_continuation(tool_call_id="x", offset=0) reads it again]',
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
