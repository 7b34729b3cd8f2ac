import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../core/types.ts';
import { estimatePromptTokens, tokenCounter } from './token-estimate.ts';

describe('tokenCounter', () => {
  it("uses OpenAI's tokenizer for its models and chars / 4 for any other", async () => {
    const text = 'Spool keeps every tool result.';
    expect((await tokenCounter('gpt-4o-mini'))(text)).toBe(7);
    expect((await tokenCounter('o3-mini'))(text)).toBe(7);
    expect((await tokenCounter('gpt-4'))(text)).toBe(7);
    expect((await tokenCounter('llama3.1:8b'))(text)).toBe(Math.ceil(text.length / 4));
  });
});

describe('estimatePromptTokens', () => {
  it('counts the system prompt, every message, tool calls and tool schemas', () => {
    const request: LlmRequest = {
      system: 'ssss',
      messages: [
        { role: 'user', content: 'uuuu', turn: 1 },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }], turn: 1 },
      ],
      tools: [{ name: 't', description: 'd', parameters: {} }],
      toolChoice: 'auto',
    };
    const byChar = (text: string) => text.length;
    const expected = 4 + JSON.stringify(request.tools).length + 4 + (4 + 4) + (4 + 0 + JSON.stringify(request.messages[1]!.role === 'assistant' && request.messages[1]!.toolCalls).length);
    expect(estimatePromptTokens(request, byChar)).toBe(expected);
  });
});
