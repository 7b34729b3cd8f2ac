import { html, type Html } from './html.ts';

/**
 * Characters that would change how the text around them reads rather than be read: C0 and C1
 * controls but tab and newline, bidirectional overrides, embeddings and isolates, zero-width
 * characters, line and paragraph separators, and the byte-order mark.
 */
const UNSEEN =
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\u061c\ufeff]/gu;

const codeOf = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Text from a tool result, the model or a person, as a page shows it: escaped, and each unseen
 * character named where it stands (a mark that says what it was), so it can neither reorder the
 * text around it nor hide any.
 */
export function inert(text: string): Html {
  const parts: Array<Html | string> = [];
  let last = 0;
  for (const match of text.matchAll(UNSEEN)) {
    parts.push(text.slice(last, match.index));
    parts.push(html`<span class="unseen" title="${codeOf(match[0])}">${codeOf(match[0])}</span>`);
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return html`${parts}`;
}
