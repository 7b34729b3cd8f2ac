import { CONTINUE_PROMPT } from './resume.ts';
import type { Message } from '../ports/conversation.ts';

/** What a turn does with a reply the model stopped at its output limit (finish_reason `length`). */
export type CutOffStep =
  /** Nothing said yet, so the budget went on reasoning: ask once more with a larger one. */
  | { action: 'retry'; maxTokens: number }
  /** Store the part that came and ask for the rest. */
  | { action: 'continue'; store: Message[] }
  /** Store the part that came, if any, and end the turn. */
  | { action: 'stop'; store: Message[]; why: 'nothing new' | 'max continuations' };

export interface CutOffProgress {
  /** Some of the reply has come already (an earlier part, before a continuation). */
  saidSomething: boolean;
  /** The output budget was raised once already. */
  budgetRaised: boolean;
  continuations: number;
}

/**
 * The next step after a cut-off reply with text `text`. A continuation that adds no text ends the
 * turn at once: asking again would only repeat the nothing.
 */
export function afterCutOff(text: string, turn: number, progress: CutOffProgress, limits: { retryMaxTokens?: number; maxContinuations: number }): CutOffStep {
  if (!text.trim()) {
    if (!progress.saidSomething && !progress.budgetRaised && limits.retryMaxTokens) return { action: 'retry', maxTokens: limits.retryMaxTokens };
    return { action: 'stop', store: [], why: 'nothing new' };
  }
  const part: Message = { role: 'assistant', content: text, turn };
  if (progress.continuations >= limits.maxContinuations) return { action: 'stop', store: [part], why: 'max continuations' };
  // Stored together, so a transcript that ends in a plain assistant message is a finished turn.
  return { action: 'continue', store: [part, { role: 'user', content: CONTINUE_PROMPT, turn }] };
}
