import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../core/ports/llm.ts';
import { OpenAiChatClient } from './openai-client.ts';
import { imageMostTokens } from './token-estimate.ts';

const client = (model: string) =>
  new OpenAiChatClient({
    apiKey: 'unused',
    baseURL: 'http://127.0.0.1:9/v1',
    model,
    maxTokens: 500,
    contextTokens: 1_000_000,
    imageInput: true,
    maxRetries: 0,
    timeoutMs: 1_000,
  });

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Text a tokenizer makes many tokens of: another script, and code with short symbols. */
const japanese = '東京の天気は晴れ、気温は二十度です。'.repeat(50);
const code = 'if(a[i]!==b[j]){x|=1<<k;}'.repeat(50);
const image = { mimeType: 'image/png', base64: 'iVBORw0KGgo=' };

const request = (model?: string): LlmRequest => ({
  system: 'You are Spool.',
  messages: [
    { role: 'user', content: japanese, turn: 1 },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_0123456789abcdef0123456789abcdef', name: 'fs__read', arguments: '{}' },
      ],
      turn: 1,
    },
    { role: 'tool', toolCallId: 'call_0123456789abcdef0123456789abcdef', content: code, turn: 1 },
  ],
  tools: [{ name: 'fs__read', description: 'Reads a file', parameters: { type: 'object' } }],
  toolChoice: 'auto',
  images: new Map([['call_0123456789abcdef0123456789abcdef', [image, image]]]),
  ...(model ? { model } : {}),
});

describe('mostTokens, the hold under a spend cap', () => {
  it('is an upper bound for a model whose tokenizer is unknown: a token a byte, and each image at its most', async () => {
    const most = await client('llama3.1:8b').mostTokens(request());
    // No byte-level tokenizer makes more tokens of a text than it has UTF-8 bytes.
    const text = bytes(japanese) + bytes(code);
    expect(most).toBeGreaterThanOrEqual(text + 2 * imageMostTokens('llama3.1:8b') + 500);
  });

  it("counts by the request's model, not the default: a channel's gpt-4o-mini bills images dearly", async () => {
    const ofDefault = await client('llama3.1:8b').mostTokens(request());
    const ofChannel = await client('llama3.1:8b').mostTokens(request('gpt-4o-mini'));
    expect(ofChannel).toBeGreaterThanOrEqual(2 * imageMostTokens('gpt-4o-mini') + 500);
    expect(ofChannel).not.toBe(ofDefault);
  });
});
