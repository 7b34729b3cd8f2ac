import type { Logger } from '../logger.ts';
import type { Conversation } from '../ports/conversation.ts';
import { LlmRequestError } from '../ports/llm.ts';
import type { TurnReply } from '../ports/turns.ts';

/**
 * What the user hears when a turn ends without a plain answer: one sentence, with the advice that
 * fits.
 */
export const TURN_REPLIES = {
  cutOffNote: "\n\n_(This reply was cut off at the model's output limit.)_",
  nothingSaid:
    "The model's reply was cut off before it said anything, even with a larger output budget. Try a narrower question, or raise OPENAI_MAX_TOKENS.",
  toolLimit:
    'I reached the tool-call limit for this message without an answer. Please narrow the question.',
  empty: 'The model returned an empty reply.',
  tooLong:
    "Your message, with the tool calls it needed, does not fit the model's context window even with the rest of the conversation left out. Please shorten it or send the long part as a file (files are read a page at a time), or ask for less at once.",
  failed:
    'Sorry, something went wrong while handling your message. Everything said so far is saved; please try again.',
  cappedMidTurn: 'I stopped here: what I did so far is kept, and I can go on once the cap resets.',
} as const;

/**
 * A turn a spend cap ends before its next request: the cap (named by the gate), and, past the
 * first request, what came of the turn so far and that it stopped.
 */
export function cappedReply(refusal: string, replySoFar: string, requests: number): TurnReply {
  if (requests === 0) return { reply: refusal, status: 'ok' };
  return {
    reply: [replySoFar, refusal, TURN_REPLIES.cappedMidTurn].filter(Boolean).join('\n\n'),
    status: 'cut_off',
  };
}

/**
 * A reply the model's output limit cut short: what came of it, marked as cut; the fallback when
 * nothing came.
 */
export function cutOffReply(text: string, fallback = ''): TurnReply {
  return { reply: text ? text + TURN_REPLIES.cutOffNote : fallback, status: 'cut_off' };
}

/** The reply to a turn that failed, with the failure logged. */
export function failedTurn(conversation: Conversation, error: unknown, logger: Logger): TurnReply {
  if (error instanceof LlmRequestError) {
    logger.error('LLM request failed', {
      conversation: conversation.id,
      status: error.status,
      error: error.message,
    });
    return {
      status: 'failed',
      reply: `Sorry, the language model request failed: ${error.message}${error.retryable ? ' Please try again.' : ''}`,
    };
  }
  logger.error('Turn failed', {
    conversation: conversation.id,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return { status: 'failed', reply: TURN_REPLIES.failed };
}
