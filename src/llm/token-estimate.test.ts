import fc from 'fast-check';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { Message } from '../core/ports/conversation.ts';
import type { LlmRequest } from '../core/ports/llm.ts';
import { toOpenAiTools } from './chat-messages.ts';
import { chatRequestBody } from './openai-client.ts';
import {
  inShortRuns,
  LONGEST_RUN,
  mayHoldLongRun,
  promptEstimator,
  tokenCounter,
  UNKNOWN_TOKENIZER_MARGIN,
  windowBound,
  windowEstimator,
} from './token-estimate.ts';

describe('tokenCounter', () => {
  it("uses OpenAI's tokenizer for its models, exact, and o200k for any other, not exact", async () => {
    const text = 'Spool keeps every tool result: call_0123456789abcdef0123456789abcdef.';
    for (const model of ['gpt-4o-mini', 'o3-mini', 'gpt-4']) {
      const { count, exact } = await tokenCounter(model);
      expect([count(text), exact]).toEqual([o200k(text), true]);
    }
    const { count, exact } = await tokenCounter('llama3.1:8b');
    expect([count(text), exact]).toEqual([o200k(text), false]);
  });
});

describe('inShortRuns', () => {
  const longestRun = (text: string) =>
    Math.max(
      0,
      ...[...text.matchAll(/[\p{L}\p{M}]+|[^\s\p{L}\p{M}\p{N}]+|\s+/gu)].map((m) => m[0].length),
    );
  const runs = [
    'x'.repeat(300_000),
    '='.repeat(50_000),
    ' '.repeat(100_000),
    '語'.repeat(20_000),
    '😀'.repeat(5_000),
    `{"padding":"${'A'.repeat(40_000)}=="}`,
  ];

  it('never gives the tokenizer a run longer than LONGEST_RUN, nor a split surrogate pair', () => {
    const seen: string[] = [];
    const count = inShortRuns((text) => (seen.push(text), o200k(text)));
    for (const text of runs) count(`before ${text} after`);
    expect(Math.max(...seen.map(longestRun))).toBeLessThanOrEqual(LONGEST_RUN);
    expect(seen.some((piece) => /^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece))).toBe(false);
    expect(seen.join('')).toBe(runs.map((text) => `before ${text} after`).join(''));
  });

  it('counts ordinary text exactly, and a long run within a token a piece of the whole count', () => {
    const count = inShortRuns(o200k);
    const prose = 'Spool keeps every tool result whole. '.repeat(2_000);
    const json = JSON.stringify({ rows: Array.from({ length: 500 }, (_, i) => ({ i, ok: true })) });
    // Runs just short of the limit are left whole.
    const nearRuns = `${'a'.repeat(LONGEST_RUN)}1${'='.repeat(LONGEST_RUN)}1`.repeat(200);
    expect([count(prose), count(json), count(nearRuns)]).toEqual([
      o200k(prose),
      o200k(json),
      o200k(nearRuns),
    ]);
    for (const text of ['x'.repeat(5_000), '-'.repeat(3_000), `a ${' '.repeat(2_000)}b`]) {
      const exact = o200k(text);
      expect(count(text)).toBeGreaterThanOrEqual(exact);
      expect(count(text)).toBeLessThanOrEqual(exact + Math.ceil(text.length / LONGEST_RUN));
    }
  });
});

describe('mayHoldLongRun', () => {
  const longestRun = (text: string) =>
    Math.max(
      0,
      ...[...text.matchAll(/[\p{L}\p{M}]+|[^\s\p{L}\p{M}\p{N}]+|\s+/gu)].map((m) => m[0].length),
    );
  // Runs of each class, ASCII or not, near the limit, one after another.
  const piece = fc
    .tuple(
      fc.constantFrom(
        'a',
        'Z',
        '=',
        '\u0000',
        ' ',
        '\n',
        '7',
        'é',
        '語',
        '😀',
        '\u0301',
        '—',
        '\u00a0',
      ),
      fc.integer({ min: 1, max: LONGEST_RUN + 2 }),
    )
    .map(([unit, times]) => unit.repeat(times));

  it('never says no where a run is longer than LONGEST_RUN, and says no to ordinary ASCII', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join('');
        if (longestRun(text) > LONGEST_RUN) expect(mayHoldLongRun(text)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    const ascii = `${'Spool keeps every tool result whole; {"a": 1}\n'.repeat(2_000)}${'x'.repeat(LONGEST_RUN)}`;
    expect(mayHoldLongRun(ascii)).toBe(false);
    expect(mayHoldLongRun(`${ascii}x`)).toBe(true);
  });
});

const call = {
  id: 'call_0123456789abcdef0123456789abcdef',
  name: 'records__lookup',
  arguments: '{}',
};
const request: LlmRequest = {
  system: 'ssss',
  messages: [
    { role: 'user', content: 'uuuu', turn: 1 },
    { role: 'assistant', content: '', toolCalls: [call], turn: 1 },
    { role: 'tool', toolCallId: call.id, content: 'rrrr', turn: 1 },
  ],
  tools: [{ name: 't', description: 'd', parameters: {} }],
  toolChoice: 'auto',
};

/**
 * A request's prompt counted from the body `complete` sends, as a Chat Completions server counts
 * it: each message's text, its tool calls, a result's call id, and the tools' schemas.
 */
function sentTokens(body: ReturnType<typeof chatRequestBody>, count: (text: string) => number) {
  const messages = body.messages.reduce((sum, m) => {
    const text = typeof m.content === 'string' ? count(m.content) : 0;
    const calls = m.role === 'assistant' && m.tool_calls ? count(JSON.stringify(m.tool_calls)) : 0;
    return sum + 3 + text + calls + (m.role === 'tool' ? count(m.tool_call_id) : 0);
  }, 3);
  return messages + (body.tools ? count(JSON.stringify(body.tools)) : 0);
}

const options = { model: 'acme-local-7b', maxTokens: 0 };

describe('promptEstimator', () => {
  it('counts the request as sent: tool calls with their type and ids, a result with its call id, the tools as sent', () => {
    const length = (text: string) => text.length;
    const estimate = promptEstimator(length)(request);
    const sent = sentTokens(chatRequestBody(options, request), length);
    expect(estimate).toBeGreaterThanOrEqual(sent);
    // Within the few tokens a message's wrapping is allowed over a server's.
    expect(estimate - sent).toBeLessThanOrEqual(2 * (request.messages.length + 2));
  });

  it('never counts less than o200k counts the body sent, whatever the messages hold', () => {
    const estimate = promptEstimator(o200k);
    const text = fc.string({ unit: 'grapheme', maxLength: 60 });
    const id = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 });
    const message: fc.Arbitrary<Message> = fc.oneof(
      fc.record({ role: fc.constant('user' as const), content: text, turn: fc.constant(1) }),
      fc.record({
        role: fc.constant('assistant' as const),
        content: text,
        toolCalls: fc.array(fc.record({ id, name: id, arguments: text }), { maxLength: 4 }),
        turn: fc.constant(1),
      }),
      fc.record({
        role: fc.constant('tool' as const),
        toolCallId: id,
        content: text,
        turn: fc.constant(1),
      }),
    );
    fc.assert(
      fc.property(text, fc.array(message, { maxLength: 12 }), (system, messages) => {
        const sent: LlmRequest = { ...request, system, messages };
        expect(estimate(sent)).toBeGreaterThanOrEqual(
          sentTokens(chatRequestBody(options, sent), o200k),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('tokenizes each message, each tool list and the system prompt once across requests: after that, only the new messages and a changed list or prompt', () => {
    const seen: string[] = [];
    const estimate = promptEstimator((text) => (seen.push(text), text.length));
    const first = estimate(request);
    seen.length = 0;
    const next = {
      ...request,
      messages: [...request.messages, { role: 'user' as const, content: 'vv', turn: 2 }],
    };
    expect(estimate(next)).toBe(first + 4 + 2);
    expect(seen).toEqual(['vv']);
    // The same schemas in another request's list (the next turn's) are not counted again.
    seen.length = 0;
    expect(estimate({ ...next, tools: [...request.tools] })).toBe(first + 4 + 2);
    expect(seen).toEqual([]);
    // Another tool list (a changed server) is counted, and another prompt.
    const tools = [...request.tools, { name: 'u', description: 'e', parameters: {} }];
    estimate({ ...next, system: 'tttt', tools });
    expect(seen).toEqual(['tttt', JSON.stringify(toOpenAiTools(tools))]);
  });
});

describe('windowBound', () => {
  it("never counts less than the window's estimate, whatever the request holds, for any model", async () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 400 });
    const repeated = fc
      .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }), fc.nat(400))
      .map(([piece, times]) => piece.repeat(times));
    for (const model of ['gpt-4o-mini', 'gpt-4', 'acme-local-7b']) {
      const [estimate, bound] = [await windowEstimator(model), windowBound(model)];
      fc.assert(
        fc.property(
          fc.oneof(text, repeated),
          fc.array(fc.oneof(text, repeated)),
          (system, said) => {
            const sent: LlmRequest = {
              ...request,
              system,
              messages: said.map((content) => ({ role: 'user', content, turn: 1 })),
            };
            expect(bound(sent)).toBeGreaterThanOrEqual(estimate(sent));
          },
        ),
        { numRuns: 150 },
      );
    }
  });
});

describe('windowEstimator', () => {
  it("keeps the measured margin over o200k's count for a model whose tokenizer is unknown, none for OpenAI's", async () => {
    const counted = promptEstimator(o200k)(request);
    expect((await windowEstimator('gpt-4o-mini'))(request)).toBe(counted);
    expect((await windowEstimator('acme-local-7b'))(request)).toBe(
      Math.ceil(counted * (1 + UNKNOWN_TOKENIZER_MARGIN)),
    );
  });
});
