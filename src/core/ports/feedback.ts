import type { ChannelScope } from './conversation.ts';

/** The feedback port: people's 👍 and 👎 on Spool's answers, kept with the answer's turn. */

export type Rating = 'up' | 'down';

/** One person's rating of one answer (the reply to inbox row `inboxId`). */
export interface AnswerRating {
  /** Where the answer was posted: a rating of an answer elsewhere is refused. */
  scope: ChannelScope;
  inboxId: string;
  user: string;
  rating: Rating;
  /** Why, for a thumbs-down, when the person said. */
  reason?: string;
}

export interface FeedbackTally {
  up: number;
  down: number;
}

export interface FeedbackPort {
  /**
   * Stores the rating: one per person per answer, a later click replacing the earlier one (a
   * reason given later is added to it). `unknown` when no answer to that message was posted in
   * that place.
   */
  rate(rating: AnswerRating): Promise<'recorded' | 'unknown'>;
  /**
   * The ratings given since `since` in a workspace, of the answers to `askedBy`'s messages (all,
   * without it).
   */
  tally(query: {
    platform: string;
    workspace: string;
    since: Date;
    askedBy?: string;
  }): Promise<FeedbackTally>;
}
