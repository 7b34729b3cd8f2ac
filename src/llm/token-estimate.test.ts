import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../core/ports/llm.ts';
import { promptEstimator, tokenCounter } from './token-estimate.ts';

describe('tokenCounter', () => {
  it("uses OpenAI's tokenizer for its models and chars / 4 for any other", async () => {
    const text = 'Spool keeps every tool result.';
    expect((await tokenCounter('gpt-4o-mini'))(text)).toBe(7);
    expect((await tokenCounter('o3-mini'))(text)).toBe(7);
    expect((await tokenCounter('gpt-4'))(text)).toBe(7);
    expect((await tokenCounter('llama3.1:8b'))(text)).toBe(Math.ceil(text.length / 4));
  });
});

describe('promptEstimator', () => {
  const request: LlmRequest = {
    system: 'ssss',
    messages: [
      { role: 'user', content: 'uuuu', turn: 1 },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }],
        turn: 1,
      },
    ],
    tools: [{ name: 't', description: 'd', parameters: {} }],
    toolChoice: 'auto',
  };
  const calls = JSON.stringify([{ id: 'c', name: 'n', arguments: '{}' }]);
  const expected = 4 + JSON.stringify(request.tools).length + 4 + (4 + 4) + (4 + 0 + calls.length);

  it('counts the system prompt, every message, tool calls and tool schemas', () => {
    expect(promptEstimator((text) => text.length)(request)).toBe(expected);
  });

  it('tokenizes each message and each tool list once across requests: after that, only the system prompt and the new messages', () => {
    const seen: string[] = [];
    const estimate = promptEstimator((text) => (seen.push(text), text.length));
    estimate(request);
    seen.length = 0;
    const next = {
      ...request,
      messages: [...request.messages, { role: 'user' as const, content: 'vv', turn: 2 }],
    };
    expect(estimate(next)).toBe(expected + 4 + 2);
    expect(seen).toEqual(['ssss', 'vv']);
    // Another tool list (another turn's, or a changed server) is counted.
    seen.length = 0;
    estimate({ ...next, tools: [...request.tools] });
    expect(seen).toEqual(['ssss', JSON.stringify(request.tools)]);
  });
});
