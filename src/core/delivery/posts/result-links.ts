import type { ReplyLink } from '../../ports/platform/delivery.ts';
import type { PreviewedResult } from '../../ports/turns.ts';

/** What a link to a stored result says: alone, or with its number and its tool among several. */
export const WHOLE_RESULT = 'View the whole result';
/** The most links a reply carries: a turn may preview dozens, and buttons are for the first few. */
export const MOST_RESULT_LINKS = 3;
/** Slack's buttons take 75 characters (Discord's 80). */
const LABEL_CHARS = 75;

const label = (text: string) =>
  text.length <= LABEL_CHARS ? text : `${text.slice(0, LABEL_CHARS - 1)}…`;

/**
 * Links to the whole results a reply's turn showed the model as previews, at `page(toolCallId)`:
 * one says "View the whole result"; of several, the first few each say which of how many, and
 * its tool. The address carries the call's id alone.
 */
export function resultLinks(
  previewed: readonly PreviewedResult[],
  page: (toolCallId: string) => string,
): ReplyLink[] {
  if (previewed.length === 1) return [{ label: WHOLE_RESULT, url: page(previewed[0]!.toolCallId) }];
  return previewed.slice(0, MOST_RESULT_LINKS).map(({ toolCallId, toolName }, i) => ({
    label: label(`${WHOLE_RESULT} ${i + 1} of ${previewed.length}: ${toolName}`),
    url: page(toolCallId),
  }));
}
