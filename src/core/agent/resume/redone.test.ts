import { describe, expect, it } from 'vitest';
import { redoneWork } from './redone.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { ToolSpec } from '../../ports/tools.ts';

const tool = (name: string, flags: ToolSpec['flags'] = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: 'object', properties: {} },
  flags,
});
const tools = [tool('read', { readOnly: true }), tool('create_ticket'), tool('deploy')];
const user: Message = { role: 'user', content: 'hi', turn: 1, inboxId: '7' };
const calls = (...names: string[]): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: names.map((name, i) => ({ id: `call_${i}`, name, arguments: '{}' })),
  turn: 1,
});
const result = (i: number): Message => ({
  role: 'tool',
  toolCallId: `call_${i}`,
  content: 'r',
  turn: 1,
});
const none = () => false;

describe('redoneWork', () => {
  it('counts the model request a turn cut short was waiting on', () => {
    expect(redoneWork([user], 1, tools, none)).toEqual({ modelRequests: 1, toolCalls: 0 });
    expect(redoneWork([user, calls('read'), result(0)], 1, tools, none)).toEqual({
      modelRequests: 1,
      toolCalls: 0,
    });
  });

  it('counts nothing once the final answer is stored', () => {
    const answer: Message = { role: 'assistant', content: 'done', turn: 1 };
    expect(redoneWork([user, answer], 1, tools, none)).toEqual({ modelRequests: 0, toolCalls: 0 });
  });

  it('counts the unanswered calls that are sent again, not those answered as interrupted', () => {
    expect(redoneWork([user, calls('read', 'create_ticket', 'read')], 1, tools, none)).toEqual({
      modelRequests: 0,
      toolCalls: 2,
    });
  });

  it('counts nothing for calls that wait for a decision: they never ran', () => {
    const waits = (call: ToolCall) => call.name === 'deploy';
    expect(redoneWork([user, calls('deploy')], 1, tools, waits)).toEqual({
      modelRequests: 0,
      toolCalls: 0,
    });
  });
});
