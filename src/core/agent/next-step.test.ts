import { describe, expect, it } from 'vitest';
import { nextStep } from './next-step.ts';
import { CONTINUE_PROMPT } from './resume/resume.ts';
import type { ModelOutcome } from './step.ts';
import { TURN_REPLIES } from './turn-replies.ts';
import { startState, type TurnState } from './turn-state.ts';
import type { LlmResponse } from '../ports/llm.ts';
import type { ToolSpec } from '../ports/tools.ts';

const tools: ToolSpec[] = [
  { name: 'read', description: 'reads', parameters: {} },
  { name: 'page', description: 'pages', parameters: {}, flags: { freeIteration: true } },
];
const turn = { number: 4, tools };
const limits = { retryMaxTokens: 16_384, maxContinuations: 3 };
const fresh = startState(
  { replyParts: [], finished: false, toolIterations: 0, continuations: 0 },
  { level: 0, viewChars: 200_000 },
);
const reply = (
  content: string,
  finishReason: LlmResponse['finishReason'] = 'stop',
  toolChoice: 'auto' | 'none' = 'auto',
): ModelOutcome => ({
  kind: 'response',
  response: { content, toolCalls: [], finishReason },
  calls: [],
  toolChoice,
});
const cut = (content: string) => reply(content, 'length');
const after = (state: Partial<TurnState>) => ({ ...fresh, ...state });

describe('nextStep', () => {
  it('answers with the reply so far and the new text, or says why there is none', () => {
    expect(nextStep(reply('done'), after({ replyParts: ['part one, '] }), turn, limits)).toEqual({
      action: 'answer',
      store: [{ role: 'assistant', content: 'done', turn: 4 }],
      reply: { reply: 'part one, done', status: 'ok' },
    });
    expect(nextStep(reply(''), fresh, turn, limits)).toMatchObject({
      action: 'answer',
      store: [],
      reply: { reply: TURN_REPLIES.empty },
    });
    expect(nextStep(reply('', 'stop', 'none'), fresh, turn, limits)).toMatchObject({
      reply: { reply: TURN_REPLIES.toolLimit, status: 'ok' },
    });
  });

  it('runs calls, counting an iteration only when some tool counts as work', () => {
    const calls = (...names: string[]): ModelOutcome =>
      ({
        ...reply('thinking', 'length'),
        calls: names.map((name, i) => ({ id: `c${i}`, name, arguments: '{}' })),
      }) as ModelOutcome;
    expect(nextStep(calls('page'), fresh, turn, limits)).toMatchObject({
      action: 'run_calls',
      countsIteration: false,
      store: [{ role: 'assistant', content: 'thinking', turn: 4 }],
    });
    expect(nextStep(calls('page', 'read'), fresh, turn, limits)).toMatchObject({
      action: 'run_calls',
      countsIteration: true,
    });
    // A model that made the tool up: it counts, so it cannot loop for free.
    expect(nextStep(calls('invented'), fresh, turn, limits)).toMatchObject({
      action: 'run_calls',
      countsIteration: true,
    });
  });

  it('asks once more with a larger budget when a cut-off reply said nothing, then stops', () => {
    expect(nextStep(cut('  '), fresh, turn, limits)).toEqual({
      action: 'retry_larger',
      maxTokens: 16_384,
    });
    expect(nextStep(cut(''), after({ maxTokens: 16_384 }), turn, limits)).toEqual({
      action: 'stop',
      why: 'nothing new',
      store: [],
      reply: { reply: TURN_REPLIES.nothingSaid, status: 'cut_off' },
    });
    expect(nextStep(cut(''), fresh, turn, { maxContinuations: 3 })).toMatchObject({
      action: 'stop',
      why: 'nothing new',
    });
  });

  it('stops at once, with what came, when a continuation adds no text', () => {
    expect(
      nextStep(cut(''), after({ replyParts: ['so far'], continuations: 1 }), turn, limits),
    ).toEqual({
      action: 'stop',
      why: 'nothing new',
      store: [],
      reply: { reply: `so far${TURN_REPLIES.cutOffNote}`, status: 'cut_off' },
    });
  });

  it('stores the part with the continue prompt, until the continuations run out', () => {
    expect(nextStep(cut('part one'), fresh, turn, limits)).toEqual({
      action: 'continue',
      part: 'part one',
      store: [
        { role: 'assistant', content: 'part one', turn: 4 },
        { role: 'user', content: CONTINUE_PROMPT, turn: 4 },
      ],
    });
    expect(
      nextStep(
        cut('four'),
        after({ replyParts: ['one ', 'two ', 'three '], continuations: 3 }),
        turn,
        limits,
      ),
    ).toEqual({
      action: 'stop',
      why: 'max continuations',
      store: [{ role: 'assistant', content: 'four', turn: 4 }],
      reply: { reply: `one two three four${TURN_REPLIES.cutOffNote}`, status: 'cut_off' },
    });
  });

  it('compacts a request that does not fit, smaller each time, and fails the turn when nothing smaller is left', () => {
    expect(nextStep({ kind: 'too_long', readChars: 9_000 }, fresh, turn, limits)).toEqual({
      action: 'compact',
      fit: { level: 1, viewChars: 200_000 },
    });
    expect(
      nextStep(
        { kind: 'too_long', readChars: 9_000 },
        after({ fit: { level: 2, viewChars: 200_000 } }),
        turn,
        limits,
      ),
    ).toEqual({ action: 'compact', fit: { level: 3, viewChars: 200_000 } });
    expect(
      nextStep(
        { kind: 'too_long', readChars: 9_000 },
        after({ fit: { level: 3, viewChars: 200_000 } }),
        turn,
        limits,
      ),
    ).toEqual({ action: 'compact', fit: { level: 3, viewChars: 4_500 } });
    expect(
      nextStep(
        { kind: 'too_long', readChars: 0 },
        after({ fit: { level: 3, viewChars: 200_000 } }),
        turn,
        limits,
      ),
    ).toEqual({
      action: 'stop',
      why: 'too long',
      store: [],
      reply: { reply: TURN_REPLIES.tooLong, status: 'failed' },
    });
  });
});
