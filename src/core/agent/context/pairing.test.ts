import { describe, expect, it } from 'vitest';
import { validateChatRequest } from '../../../../test/support/fake-openai.ts';
import { INTERRUPTED_RESULT, repairToolPairing } from './pairing.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';

const call = (id: string, name = 'fs__read'): ToolCall => ({ id, name, arguments: '{}' });
const user = (content: string, turn = 1): Message => ({ role: 'user', content, turn });
const asks = (...calls: ToolCall[]): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: calls,
  turn: 1,
});
const result = (id: string, content = `result ${id}`): Message => ({
  role: 'tool',
  toolCallId: id,
  content,
  turn: 1,
});

/** The same wire shape the OpenAI client sends, checked by the strict fake's validator. */
function acceptedByApi(messages: Message[]): string | undefined {
  return validateChatRequest({
    model: 'm',
    messages: messages.map((m) =>
      m.role === 'tool'
        ? { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
        : m.role === 'assistant' && m.toolCalls?.length
          ? {
              role: 'assistant',
              content: m.content || null,
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : { role: m.role, content: m.content },
    ),
  });
}

describe('repairToolPairing', () => {
  it('leaves a well-formed history as it is', () => {
    const history = [
      user('hi'),
      asks(call('a'), call('b')),
      result('a'),
      result('b'),
      { role: 'assistant', content: 'done', turn: 1 } as Message,
    ];
    expect(repairToolPairing(history)).toEqual(history);
  });

  it('answers a call that has no result with a synthetic error right after it', () => {
    const out = repairToolPairing([user('hi'), asks(call('a')), user('again', 2)]);
    expect(out[2]).toEqual({ role: 'tool', toolCallId: 'a', content: INTERRUPTED_RESULT, turn: 1 });
    expect(acceptedByApi(out)).toBeUndefined();
  });

  it('moves a misplaced result behind its call', () => {
    const out = repairToolPairing([user('hi'), asks(call('a')), user('interleaved'), result('a')]);
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(out[2]).toMatchObject({ toolCallId: 'a', content: 'result a' });
  });

  it('drops a result whose call does not exist', () => {
    const out = repairToolPairing([
      user('hi'),
      result('ghost'),
      { role: 'assistant', content: 'ok', turn: 1 },
    ]);
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('keeps the first of duplicate calls and of duplicate results', () => {
    const out = repairToolPairing([
      user('hi'),
      asks(call('a')),
      result('a', 'first'),
      result('a', 'second'),
      asks(call('a'), call('b')),
      result('b'),
    ]);
    expect(out.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'first',
      'result b',
    ]);
    expect(acceptedByApi(out)).toBeUndefined();
  });

  it('keeps the first of duplicate call ids inside one assistant message, with its result', () => {
    const history = [
      user('hi'),
      asks(call('a'), call('a', 'other_tool'), call('b')),
      result('a'),
      result('a', 'again'),
      result('b'),
    ];
    expect(acceptedByApi(history)).toMatch(/Duplicate tool_call_id 'a'/);
    const out = repairToolPairing(history);
    expect(out).toEqual([user('hi'), asks(call('a'), call('b')), result('a'), result('b')]);
    expect(acceptedByApi(out)).toBeUndefined();
    expect(repairToolPairing(out)).toEqual(out);
  });

  it('drops calls with an empty id, and results naming one, keeping the text beside them', () => {
    const history = [
      user('hi'),
      { ...asks(call(''), call('b')), content: 'let me look' },
      result(''),
      result('b'),
      asks(call('')),
    ];
    expect(acceptedByApi(history)).toMatch(/empty string/);
    const out = repairToolPairing(history);
    expect(out).toEqual([user('hi'), { ...asks(call('b')), content: 'let me look' }, result('b')]);
    expect(acceptedByApi(out)).toBeUndefined();
  });

  it('drops an assistant message left with neither calls nor text', () => {
    const out = repairToolPairing([user('hi'), asks(call('a')), result('a'), asks(call('a'))]);
    expect(out).toHaveLength(3);
  });

  it('renames tool names the API would reject', () => {
    const out = repairToolPairing([
      user('hi'),
      asks(call('a', 'functions.read file')),
      result('a'),
    ]);
    expect(out[1]).toMatchObject({ toolCalls: [{ name: 'functions_read_file' }] });
  });

  it('makes any shuffle of a tool history acceptable to the API', () => {
    const base = [
      user('q'),
      asks(call('a'), call('b')),
      result('a'),
      result('b'),
      user('q2', 2),
      asks(call('c')),
      result('c'),
      result('zz'),
    ];
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 200; round++) {
      const shuffled = [...base].sort(() => random() - 0.5).filter(() => random() > 0.2);
      if (!shuffled.some((m) => m.role === 'user')) shuffled.unshift(user('q'));
      expect(acceptedByApi(repairToolPairing(shuffled))).toBeUndefined();
    }
  });
});

describe('the strict validator the repair is checked against', () => {
  it('rejects a call without its result and a result without its call', () => {
    expect(acceptedByApi([user('hi'), asks(call('a'))])).toMatch(/did not have response messages/);
    expect(acceptedByApi([user('hi'), result('a')])).toMatch(
      /must be a response to a preceeding message/,
    );
    expect(
      acceptedByApi([user('hi'), asks(call('a')), result('a'), asks(call('a')), result('a')]),
    ).toMatch(/Duplicate/);
  });
});
