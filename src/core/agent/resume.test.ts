import { describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT, turnProgress } from './resume.ts';
import type { Message } from '../ports/conversation.ts';
import type { ToolSpec } from '../ports/tools.ts';

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
