import type { ReplyLink } from '../../core/ports/platform/delivery.ts';

/**
 * The action ids of link buttons (`spool_link_0`, …, one per button of a block): a click opens the
 * page in the browser, and Slack's call about it is acknowledged as any unknown action's.
 */
const LINK_ACTION = 'spool_link';
/** Slack's limit on a button's text. */
const LABEL_CHARS = 75;

/** Links as one actions block of URL buttons. */
export const linkButtons = (links: readonly ReplyLink[]) => ({
  type: 'actions' as const,
  elements: links.map((link, i) => ({
    type: 'button' as const,
    text: { type: 'plain_text' as const, text: link.label.slice(0, LABEL_CHARS) },
    url: link.url,
    action_id: `${LINK_ACTION}_${i}`,
  })),
});

/** Links as lines of text, where a message takes no blocks (a file's comment). */
export const linkLines = (text: string, links: readonly ReplyLink[] = []) =>
  [text, ...links.map((link) => `<${link.url}|${link.label}>`)].join('\n');
