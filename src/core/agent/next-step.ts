import { flagsOf } from './accepted-calls.ts';
import { nextFit, type Fit } from './context/request.ts';
import { CONTINUE_PROMPT } from './resume.ts';
import { cutOffReply, TURN_REPLIES } from './turn-replies.ts';
import type { TurnState } from './turn-state.ts';
import type { Message, ToolCall } from '../ports/conversation.ts';
import type { LlmResponse } from '../ports/llm.ts';
import type { ToolSpec } from '../ports/tools.ts';
import type { TurnReply } from '../ports/turns.ts';

/** How a request to the model came back. */
export type ModelOutcome =
  | { kind: 'response'; response: LlmResponse; calls: ToolCall[]; toolChoice: 'auto' | 'none' }
  /** The request does not fit the model's window (the server said so, or the estimate did). */
  | { kind: 'too_long'; readChars: number };

/**
 * What the turn does next. The loop acts on this and on nothing else; `store` is written before
 * anything else happens.
 */
export type Step =
  /** Run the calls; they are stored with the message that made them, before any runs. */
  | { action: 'run_calls'; calls: ToolCall[]; countsIteration: boolean; store: Message[] }
  /**
   * The files shared with the user message become results of calls Spool makes for them, before
   * the model is first asked: previewed, paged, searched and compacted like any result.
   */
  | { action: 'share_files'; calls: ToolCall[]; store: Message[] }
  /**
   * A restarted turn's calls that wait for approval: stored already, they are run (once decided)
   * without asking the model again.
   */
  | { action: 'resume_calls'; calls: ToolCall[] }
  /**
   * Cut off at the output limit with text: store the part with the continue prompt, and ask for the
   * rest.
   */
  | { action: 'continue'; part: string; store: Message[] }
  /** Cut off before any text, so the budget went on reasoning: ask once more with a larger one. */
  | { action: 'retry_larger'; maxTokens: number }
  /** Too long for the window: send it again, fitted smaller. */
  | { action: 'compact'; fit: Fit }
  | { action: 'answer'; store: Message[]; reply: TurnReply }
  /** The turn ends without a plain answer. */
  | {
      action: 'stop';
      why: 'nothing new' | 'max continuations' | 'too long';
      store: Message[];
      reply: TurnReply;
    };

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
