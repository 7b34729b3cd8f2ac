import { describe, expect, it } from 'vitest';
import { buildRequestMessages, keepRecentTurns, nextFit, type Fit } from './request.ts';
import { previewMarker } from '../../markers.ts';
import type { Message } from '../../ports/conversation.ts';

const options = {
  minChars: 3000,
  horizonTurns: 20,
  headChars: 2000,
  tailChars: 500,
};
const turn = (t: number, size: number): Message[] => [
  { role: 'user', content: `question ${t}`, turn: t },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: `c${t}`, name: 'x', arguments: '{}' }],
    turn: t,
  },
  { role: 'tool', toolCallId: `c${t}`, content: 'r\n'.repeat(size / 2), turn: t },
  { role: 'assistant', content: `answer ${t}`, turn: t },
];
const size = (messages: Message[]) => messages.reduce((n, m) => n + m.content.length, 0);

describe('buildRequestMessages', () => {
  const transcript = [1, 2, 3, 4].flatMap((t) => turn(t, 20_000));

  it("sends a finished turn's messages as the same objects on every request, so each is checked and counted once", () => {
    const build = (messages: Message[], current: number) =>
      buildRequestMessages(messages, current, { compaction: options, viewChars: 200_000 }).messages;
    const first = build(transcript, 4);
    const again = build(transcript, 4);
    const next = build([...transcript, ...turn(5, 20_000)], 5);
    first.forEach((m, i) => expect(again[i]).toBe(m));
    // Turns 1-3 were finished in both: the next turn's request begins with the very same ones.
    const finished = first.filter((m) => m.turn < 4);
    expect(finished.length).toBe(12);
    finished.forEach((m, i) => expect(next[i]).toBe(m));
  });

  it('compacts harder at each overflow level', () => {
    const sizes = ([0, 1, 2, 3] as const).map((level) =>
      size(
        buildRequestMessages(transcript, 4, { compaction: options, level, viewChars: 200_000 })
          .messages,
      ),
    );
    expect(sizes[1]).toBeLessThan(sizes[0]!);
    expect(sizes[2]).toBeLessThan(sizes[1]!);
    expect(sizes[3]).toBeLessThan(sizes[2]!);
  });

  it('keeps only the recent turns at level 2, saying what was left out', () => {
    const out = buildRequestMessages(transcript, 4, {
      compaction: options,
      level: 2,
      viewChars: 200_000,
    }).messages;
    expect(out[0]).toEqual({
      role: 'user',
      content:
        "[8 earlier messages of this conversation were left out to fit the model's context window.]",
      turn: 3,
    });
    expect(out.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      out[0]!.content,
      'question 3',
      'question 4',
    ]);
  });

  it('keeps only this turn at level 3, its results a line each that says how to read them', () => {
    const out = buildRequestMessages(transcript, 4, {
      compaction: options,
      level: 3,
      viewChars: 200_000,
    }).messages;
    expect(out.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant']);
    expect(out[0]!.content).toBe(
      "[12 earlier messages of this conversation were left out to fit the model's context window.]",
    );
    expect(out[3]!.content).toBe(previewMarker('c4', 0, 20_000, 0));
  });

  it('repairs pairing after compaction', () => {
    const broken = transcript.filter((m) => !(m.role === 'tool' && m.toolCallId === 'c4'));
    const { messages: out, repairs } = buildRequestMessages(broken, 4, {
      compaction: options,
      viewChars: 200_000,
    });
    expect(out.some((m) => m.role === 'tool' && m.toolCallId === 'c4')).toBe(true);
    expect(repairs).toBe(1);
    expect(
      buildRequestMessages(transcript, 4, { compaction: options, viewChars: 200_000 }).repairs,
    ).toBe(0);
  });

  it('fits by compacting older turns first, then by narrowing the view while that still cuts something', () => {
    const fits = (first: Fit, readChars: number) => {
      const all = [first];
      for (let next = nextFit(first, readChars); next; next = nextFit(next, readChars))
        all.push(next);
      return all;
    };
    expect(fits({ level: 0, viewChars: 200_000 }, 9_000)).toEqual([
      { level: 0, viewChars: 200_000 },
      { level: 1, viewChars: 200_000 },
      { level: 2, viewChars: 200_000 },
      { level: 3, viewChars: 200_000 },
      { level: 3, viewChars: 4_500 },
      { level: 3, viewChars: 2_250 },
      { level: 3, viewChars: 1_125 },
      { level: 3, viewChars: 562 },
      { level: 3, viewChars: 281 },
    ]);
    // Nothing read this turn: narrowing the view would send the same request again.
    expect(fits({ level: 1, viewChars: 200_000 }, 0)).toEqual([
      { level: 1, viewChars: 200_000 },
      { level: 2, viewChars: 200_000 },
      { level: 3, viewChars: 200_000 },
    ]);
  });

  it('returns a history untouched when nothing is old or large', () => {
    expect(keepRecentTurns(turn(1, 10), 1)).toEqual(turn(1, 10));
  });
});
