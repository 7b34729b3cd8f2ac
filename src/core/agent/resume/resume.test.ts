import { describe, expect, it } from 'vitest';
import {
  CONTINUE_PROMPT,
  cutShortResult,
  resumePlan,
  safeToRepeat,
  turnProgress,
  unansweredCalls,
} from './resume.ts';
import { interruptedCallMarker } from '../../markers.ts';
import type { Message } from '../../ports/conversation.ts';
import { errorResult, type ToolSpec } from '../../ports/tools.ts';

const user = (content: string, turn: number, inboxId?: string): Message => ({
  role: 'user',
  content,
  turn,
  ...(inboxId ? { inboxId } : {}),
});
const say = (content: string, turn: number): Message => ({ role: 'assistant', content, turn });
const call = (id: string, name: string, turn: number): Message => ({
  role: 'assistant',
  content: 'thinking',
  toolCalls: [{ id, name, arguments: '{}' }],
  turn,
});
const result = (id: string, turn: number): Message => ({
  role: 'tool',
  toolCallId: id,
  content: 'r',
  turn,
});
const tools: ToolSpec[] = [
  {
    name: 'get_continuation',
    description: 'pages',
    parameters: {},
    flags: { freeIteration: true },
  },
];

describe('turnProgress', () => {
  it('sees a turn with its final answer stored as finished, with that answer as the reply', () => {
    const t = [user('q', 1, '7'), call('a', 'search', 1), result('a', 1), say('answer', 1)];
    expect(turnProgress(t, 1, tools)).toEqual({
      replyParts: ['answer'],
      finished: true,
      toolIterations: 1,
      continuations: 0,
    });
  });

  it('sees a turn cut short after a tool call or its result as unfinished, with nothing said yet', () => {
    for (const t of [
      [user('q', 1)],
      [user('q', 1), call('a', 'x', 1)],
      [user('q', 1), call('a', 'x', 1), result('a', 1)],
    ]) {
      expect(turnProgress(t, 1, tools)).toMatchObject({ replyParts: [], finished: false });
    }
  });

  it('keeps the parts of a reply continued after max_tokens, and counts the continuations', () => {
    const t = [
      user('q', 2, '9'),
      say('part one ', 2),
      user(CONTINUE_PROMPT, 2),
      say('part two', 2),
    ];
    expect(turnProgress(t, 2, tools)).toMatchObject({
      replyParts: ['part one ', 'part two'],
      finished: true,
      continuations: 1,
    });
    expect(turnProgress(t.slice(0, 3), 2, tools)).toMatchObject({
      replyParts: ['part one '],
      finished: false,
      continuations: 1,
    });
  });

  it('drops text the model said before a later tool round, and counts only rounds of tools that count as work', () => {
    const t = [
      user('q', 3),
      say('early', 3),
      user(CONTINUE_PROMPT, 3),
      call('p', 'get_continuation', 3),
      result('p', 3),
      call('b', 'x', 3),
      result('b', 3),
    ];
    expect(turnProgress(t, 3, tools)).toMatchObject({
      replyParts: [],
      finished: false,
      toolIterations: 1,
      continuations: 1,
    });
  });

  it('looks only at the turn asked for', () => {
    const t = [user('q', 1), say('old answer', 1), user('q2', 2, '3')];
    expect(turnProgress(t, 2, tools)).toMatchObject({ replyParts: [], finished: false });
  });

  it('does not take a user message that happens to read like the continue prompt for one', () => {
    const t = [user('q', 1), say('a', 1), user(CONTINUE_PROMPT, 1, '12')];
    expect(turnProgress(t, 1, tools)).toMatchObject({
      replyParts: [],
      finished: false,
      continuations: 0,
    });
  });
});

describe('calls whose outcome is unknown', () => {
  const spec = (name: string, flags: ToolSpec['flags']): ToolSpec => ({
    name,
    description: name,
    parameters: {},
    flags,
  });
  const kinds: ToolSpec[] = [
    spec('tickets__create_ticket', {}),
    spec('tickets__lookup_ticket', { readOnly: true }),
    spec('tickets__close_ticket', { idempotent: true }),
  ];
  const round = (...names: string[]): Message => ({
    role: 'assistant',
    content: '',
    toolCalls: names.map((name, i) => ({ id: `c${i}`, name, arguments: '{}' })),
    turn: 1,
  });

  it('sends again only calls of read-only or idempotent tools', () => {
    expect(safeToRepeat({})).toBe(false);
    expect(safeToRepeat({ derived: true, bounded: true })).toBe(false);
    expect(safeToRepeat({ readOnly: true })).toBe(true);
    expect(safeToRepeat({ idempotent: true })).toBe(true);
  });

  it('answers a resumed call of a tool that is neither with the marker, and never sends it again', () => {
    const t = [user('q', 1, '4'), round('tickets__create_ticket', 'gone__tool')];
    const { resend, answered } = resumePlan(unansweredCalls(t, 1), kinds);
    expect(resend).toEqual([]);
    expect([...answered]).toEqual([
      ['c0', errorResult(interruptedCallMarker('tickets__create_ticket'))],
      // A tool no longer listed: nothing says it is safe to repeat.
      ['c1', errorResult(interruptedCallMarker('gone__tool'))],
    ]);
    expect(interruptedCallMarker('x')).toMatch(/may or may not have taken effect/);
  });

  it('sends a resumed call of a read-only or idempotent tool again, and answers only the others', () => {
    const t = [
      user('q', 1, '4'),
      round('tickets__lookup_ticket', 'tickets__create_ticket', 'tickets__close_ticket'),
      result('c1', 1),
    ];
    const { resend, answered } = resumePlan(unansweredCalls(t, 1), kinds);
    expect(resend.map((c) => c.name)).toEqual(['tickets__lookup_ticket', 'tickets__close_ticket']);
    expect([...answered.keys()]).toEqual([]);
  });

  it("keeps what a call cut short by the turn's signal said only where it may be called again", () => {
    const stopped = {
      ...errorResult('create_ticket was stopped before it finished.'),
      cutShort: true,
    };
    expect(cutShortResult(stopped, 'tickets__create_ticket', kinds)).toEqual({
      ...errorResult(interruptedCallMarker('tickets__create_ticket')),
      cutShort: true,
    });
    expect(cutShortResult(stopped, 'tickets__lookup_ticket', kinds)).toBe(stopped);
    const finished = { content: 'ticket T-1 created', isError: false };
    expect(cutShortResult(finished, 'tickets__create_ticket', kinds)).toBe(finished);
  });
});
