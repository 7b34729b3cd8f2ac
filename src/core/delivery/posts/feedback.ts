import type { FeedbackTally } from '../../ports/feedback.ts';
import type { FeedbackClick, FeedbackOutcome } from '../../ports/platform/platform.ts';

/** The most of a reason that is kept. */
export const REASON_MAX_CHARS = 1_000;

/** What the person who clicked is told, privately. */
export function feedbackReply(outcome: FeedbackOutcome, click: FeedbackClick): string {
  if (outcome === 'refused') return 'Spool is not enabled for you here.';
  if (outcome === 'unknown')
    return 'That answer is no longer kept, so your feedback was not saved.';
  if (click.reason) return 'Thanks: your reason was saved with your 👎.';
  return click.rating === 'up'
    ? 'Thanks for the 👍: it is saved with this answer.'
    : 'Thanks for the 👎: it is saved with this answer.';
}

/** The report's line on ratings, beside what the answers cost. */
export const feedbackLine = ({ up, down }: FeedbackTally) =>
  `Answers rated this month: 👍 ${up} · 👎 ${down}`;

/** The start of the month (UTC) of `now`. */
export const monthStart = (now: Date) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
