import { flagsOf } from './calls/accepted-calls.ts';
import { nextFit } from './context/request.ts';
import { CONTINUE_PROMPT } from './resume/resume.ts';
import type { ModelOutcome, Step } from './step.ts';
import { cutOffReply, TURN_REPLIES } from './turn-replies.ts';
import type { TurnState } from './turn-state.ts';
import type { Message } from '../ports/conversation.ts';
import type { ToolSpec } from '../ports/tools.ts';

export interface StepLimits {
  maxContinuations: number;
  /**
   * The output budget for one more try when a reply is cut off before it says anything; none, no
   * retry.
   */
  retryMaxTokens?: number;
}

/** The next step of `turn` after the model's `outcome`. Pure: everything it weighs is passed in. */
export function nextStep(
  outcome: ModelOutcome,
  state: TurnState,
  turn: { number: number; tools: readonly ToolSpec[] },
  limits: StepLimits,
): Step {
  if (outcome.kind === 'too_long') {
    const fit = nextFit(state.fit, outcome.readChars);
    return fit
      ? { action: 'compact', fit }
      : {
          action: 'stop',
          why: 'too long',
          store: [],
          reply: { reply: TURN_REPLIES.tooLong, status: 'failed' },
        };
  }
  const { response, calls, toolChoice } = outcome;
  if (calls.length > 0) {
    const countsIteration = calls.some((c) => !flagsOf(turn.tools, c.name).freeIteration);
    return {
      action: 'run_calls',
      calls,
      countsIteration,
      store: [
        { role: 'assistant', content: response.content, toolCalls: calls, turn: turn.number },
      ],
    };
  }
  const said = state.replyParts.join('');
  if (response.finishReason === 'length')
    return afterCutOff(response.content, said, state, turn.number, limits);
  const reply =
    said + response.content ||
    (toolChoice === 'none' ? TURN_REPLIES.toolLimit : TURN_REPLIES.empty);
  return {
    action: 'answer',
    store: response.content
      ? [{ role: 'assistant', content: response.content, turn: turn.number }]
      : [],
    reply: { reply, status: 'ok' },
  };
}

/**
 * A continuation that adds no text ends the turn at once: asking again would only repeat the
 * nothing.
 */
function afterCutOff(
  text: string,
  said: string,
  state: TurnState,
  turn: number,
  limits: StepLimits,
): Step {
  if (!text.trim()) {
    if (state.replyParts.length === 0 && state.maxTokens === undefined && limits.retryMaxTokens)
      return { action: 'retry_larger', maxTokens: limits.retryMaxTokens };
    return {
      action: 'stop',
      why: 'nothing new',
      store: [],
      reply: cutOffReply(said, TURN_REPLIES.nothingSaid),
    };
  }
  const part: Message = { role: 'assistant', content: text, turn };
  if (state.continuations >= limits.maxContinuations)
    return {
      action: 'stop',
      why: 'max continuations',
      store: [part],
      reply: cutOffReply(said + text),
    };
  // Stored together, so a transcript that ends in a plain assistant message is a finished turn.
  return {
    action: 'continue',
    part: text,
    store: [part, { role: 'user', content: CONTINUE_PROMPT, turn }],
  };
}
