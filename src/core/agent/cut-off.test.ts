import { describe, expect, it } from 'vitest';
import { afterCutOff } from './cut-off.ts';
import { CONTINUE_PROMPT } from './resume.ts';

const fresh = { saidSomething: false, budgetRaised: false, continuations: 0 };
const limits = { retryMaxTokens: 16_384, maxContinuations: 3 };

describe('afterCutOff', () => {
  it('asks once more with a larger budget when nothing was said, then stops', () => {
    expect(afterCutOff('  ', 4, fresh, limits)).toEqual({ action: 'retry', maxTokens: 16_384 });
    expect(afterCutOff('', 4, { ...fresh, budgetRaised: true }, limits)).toEqual({ action: 'stop', store: [], why: 'nothing new' });
    expect(afterCutOff('', 4, fresh, { maxContinuations: 3 })).toEqual({ action: 'stop', store: [], why: 'nothing new' });
  });

  it('stops at once when a continuation adds no text', () => {
    expect(afterCutOff('', 4, { ...fresh, saidSomething: true, continuations: 1 }, limits)).toEqual({ action: 'stop', store: [], why: 'nothing new' });
  });

  it('stores the part with the continue prompt, until the continuations run out', () => {
    expect(afterCutOff('part one', 4, fresh, limits)).toEqual({
      action: 'continue',
      store: [
        { role: 'assistant', content: 'part one', turn: 4 },
        { role: 'user', content: CONTINUE_PROMPT, turn: 4 },
      ],
    });
    expect(afterCutOff('part four', 4, { ...fresh, saidSomething: true, continuations: 3 }, limits)).toEqual({
      action: 'stop',
      store: [{ role: 'assistant', content: 'part four', turn: 4 }],
      why: 'max continuations',
    });
  });
});
