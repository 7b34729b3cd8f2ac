import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkStringify from 'remark-stringify';
import { collectDefinitions, removeDefinitions } from 'slackify-markdown/src/definitions.js';
import slackifyOptions from 'slackify-markdown/src/slackify.js';
import unified from 'unified';

/**
 * The link definitions of the text being converted, for its references. One map serves every
 * conversion (each runs synchronously, start to end); each empties it first, so that it does not
 * grow with every text's definitions. (A reference is one only where its own text defines it.)
 */
const definitions: Record<string, { title: string | null; url: string }> = {};

/**
 * slackify-markdown's pipeline (GFM, its link definitions, its Slack handlers), built once. The
 * library builds it again for every text, and that building (the parser's extensions combined,
 * the handlers configured) cost as much as the conversion of a short reply.
 */
const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(collectDefinitions, definitions)
  .use(removeDefinitions)
  .use(remarkStringify, slackifyOptions(definitions))
  .freeze();

/** Markdown as Slack's mrkdwn, as slackify-markdown converts it. */
export function toMrkdwn(markdown: string): string {
  for (const id of Object.keys(definitions)) delete definitions[id];
  return String(processor.processSync(markdown));
}
