import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_COUNT, MAX_TOTAL, readUsage } from './usage.ts';

/** OpenAI's shape, with the counts a test sets. */
const served = (counts: {
  prompt?: unknown;
  cached?: unknown;
  completion?: unknown;
  reasoning?: unknown;
  total?: unknown;
}) => ({
  prompt_tokens: counts.prompt,
  prompt_tokens_details: { cached_tokens: counts.cached },
  completion_tokens: counts.completion,
  completion_tokens_details: { reasoning_tokens: counts.reasoning },
  total_tokens: counts.total,
});

const kept = (raw: unknown) => {
  const usage = readUsage(raw, 'm', 'chatcmpl-1')!;
  return {
    prompt: usage.promptTokens,
    cached: usage.cachedPromptTokens,
    completion: usage.completionTokens,
    reasoning: usage.reasoningTokens,
    total: usage.totalTokens,
    adjusted: (usage.adjusted ?? []).map((a) => `${a.field} ${a.reported} ${a.fix}`),
  };
};

describe('readUsage', () => {
  it('keeps what a server reports right as it is, naming nothing', () => {
    expect(
      readUsage(served({ prompt: 100, cached: 40, completion: 20, reasoning: 5, total: 120 }), 'm'),
    ).toEqual({
      model: 'm',
      promptTokens: 100,
      cachedPromptTokens: 40,
      completionTokens: 20,
      reasoningTokens: 5,
      totalTokens: 120,
    });
    // Details are optional: a server without a prompt cache or reasoning sends none.
    expect(
      readUsage({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }, 'm', 'id-1'),
    ).toEqual({
      model: 'm',
      promptTokens: 7,
      cachedPromptTokens: 0,
      completionTokens: 3,
      reasoningTokens: 0,
      totalTokens: 10,
      responseId: 'id-1',
    });
  });

  it('has no usage for a response without one', () => {
    for (const raw of [undefined, null, 'usage', 42]) expect(readUsage(raw, 'm')).toBeUndefined();
  });

  it.each([
    ['null', null],
    ['a string', 'NaN'],
    ['a numeric string', '1000'],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['negative', -500],
    ['past a billion', 3e9],
    ['past any integer', 9e15],
    ['an object', { n: 1 }],
  ])('drops a prompt count that is %s, and works it out from the total', (_, prompt) => {
    const usage = kept(served({ prompt, completion: 20, total: 1_020 }));
    expect(usage).toMatchObject({ prompt: 1_000, completion: 20, total: 1_020 });
    expect(usage.adjusted).toHaveLength(1);
    expect(usage.adjusted[0]).toMatch(/^prompt_tokens .+ derived$/);
  });

  it('drops a count it cannot work out to 0, and the total to what is known', () => {
    expect(kept(served({ prompt: null, completion: 20, total: 'NaN' }))).toEqual({
      prompt: 0,
      cached: 0,
      completion: 20,
      reasoning: 0,
      total: 20,
      adjusted: ['prompt_tokens null dropped', 'total_tokens "NaN" dropped'],
    });
    expect(kept(served({ prompt: -5, completion: -7, total: -12 }))).toEqual({
      prompt: 0,
      cached: 0,
      completion: 0,
      reasoning: 0,
      total: 0,
      adjusted: [
        'prompt_tokens -5 dropped',
        'completion_tokens -7 dropped',
        'total_tokens -12 dropped',
      ],
    });
    // Missing outright, as a server that counts nothing sends it.
    expect(kept({})).toMatchObject({
      prompt: 0,
      total: 0,
      adjusted: [
        'prompt_tokens undefined dropped',
        'completion_tokens undefined dropped',
        'total_tokens undefined derived',
      ],
    });
  });

  it('rounds a fraction, and raises a total short of its parts to their sum', () => {
    expect(kept(served({ prompt: 1000.5, completion: 19.4, total: 1015.2 }))).toEqual({
      prompt: 1_001,
      cached: 0,
      completion: 19,
      reasoning: 0,
      total: 1_020,
      adjusted: [
        'prompt_tokens 1000.5 rounded',
        'completion_tokens 19.4 rounded',
        'total_tokens 1015.2 clamped',
      ],
    });
  });

  it('clamps cached tokens to the prompt and reasoning tokens to the completion', () => {
    expect(
      kept(served({ prompt: 100, cached: 250, completion: 10, reasoning: 11, total: 110 })),
    ).toEqual({
      prompt: 100,
      cached: 100,
      completion: 10,
      reasoning: 10,
      total: 110,
      adjusted: ['cached_tokens 250 clamped', 'reasoning_tokens 11 clamped'],
    });
    // Odd details are dropped to 0.
    expect(
      kept(served({ prompt: 100, cached: 'x', completion: 10, reasoning: -1, total: 110 })),
    ).toMatchObject({ cached: 0, reasoning: 0 });
  });

  it('keeps a count at the bound and drops one past it', () => {
    expect(kept(served({ prompt: MAX_COUNT, completion: MAX_COUNT })).total).toBe(MAX_TOTAL);
    expect(kept(served({ prompt: MAX_COUNT + 1, completion: 1 }))).toMatchObject({
      prompt: 0,
      total: 1,
      adjusted: [`prompt_tokens ${MAX_COUNT + 1} dropped`, 'total_tokens undefined derived'],
    });
    // Nor is a part worked out from a total past the bound.
    expect(kept(served({ completion: 1, total: MAX_COUNT + 2 })).prompt).toBe(0);
  });

  /** Anything a JSON body can carry where a count belongs. */
  const anyCount = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.double(),
    fc.integer({ min: -1_000, max: 1_000_000 }),
    fc.constantFrom(3e9, 9e15, MAX_COUNT, MAX_TOTAL, -0, 0.5),
    fc.string({ maxLength: 4 }),
    fc.boolean(),
  );

  it('keeps whole counts in the int columns, the parts within their wholes, and the total at least their sum, whatever is sent', () => {
    fc.assert(
      fc.property(
        fc.record({
          prompt: anyCount,
          cached: anyCount,
          completion: anyCount,
          reasoning: anyCount,
          total: anyCount,
        }),
        (counts) => {
          const u = readUsage(served(counts), 'm')!;
          const all = [
            u.promptTokens,
            u.cachedPromptTokens!,
            u.completionTokens,
            u.reasoningTokens!,
            u.totalTokens,
          ];
          for (const n of all) {
            expect(Number.isSafeInteger(n)).toBe(true);
            expect(n).toBeGreaterThanOrEqual(0);
            expect(n).toBeLessThanOrEqual(2 ** 31 - 1);
          }
          expect(u.cachedPromptTokens).toBeLessThanOrEqual(u.promptTokens);
          expect(u.reasoningTokens).toBeLessThanOrEqual(u.completionTokens);
          expect(u.totalTokens).toBeGreaterThanOrEqual(u.promptTokens + u.completionTokens);
          // Whatever was not kept as sent is named, once per count.
          const fields = (u.adjusted ?? []).map((a) => a.field);
          expect(new Set(fields).size).toBe(fields.length);
          const sent = { prompt_tokens: counts.prompt, total_tokens: counts.total };
          for (const [field, value] of Object.entries(sent))
            if (!fields.includes(field as 'prompt_tokens'))
              expect(value).toBe(field === 'prompt_tokens' ? u.promptTokens : u.totalTokens);
        },
      ),
      { numRuns: 1_000 },
    );
  }, 20_000);

  it('changes nothing a sane server sends', () => {
    fc.assert(
      fc.property(
        fc.nat(MAX_COUNT),
        fc.nat(MAX_COUNT),
        fc.nat(MAX_COUNT),
        fc.nat(MAX_COUNT),
        fc.nat(1_000),
        (prompt, cachedOf, completion, reasoningOf, extra) => {
          const cached = cachedOf % (prompt + 1);
          const reasoning = reasoningOf % (completion + 1);
          const total = Math.min(MAX_TOTAL, prompt + completion + extra);
          const u = readUsage(served({ prompt, cached, completion, reasoning, total }), 'm')!;
          expect(u).toEqual({
            model: 'm',
            promptTokens: prompt,
            cachedPromptTokens: cached,
            completionTokens: completion,
            reasoningTokens: reasoning,
            totalTokens: total,
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
