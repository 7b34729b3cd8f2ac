import MiniSearch from 'minisearch';
import type { ToolSpec } from '../../ports/tools.ts';

/**
 * Which tools fit a request's words: MiniSearch's BM25 over each tool's name (split at `__`, `_`,
 * `-`, `.` and case changes, so `gh__createIssue` reads "gh create issue") and its whole
 * description. A word also matches the longer words it starts (`file` finds "files") and, past
 * four letters, a word one letter off; words as common as "the" or "please" are left out.
 */

/** Words that say nothing about which tool fits. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be by can could do does for from get give have how i in is it its me my ' +
    'of on or our please show that the their them there these this to us use want was we what ' +
    'when which will with would you your'
  ).split(' '),
);

/** Words, from names as from prose: `createIssue` and `create_issue` both give create, issue. */
const words = (text: string): string[] =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** Endings that make one word of several (files, meeting, closed), each where the rest is long. */
const ENDINGS: Array<[ending: RegExp, rest: number]> = [
  [/ing$/, 4],
  [/ed$/, 3],
  [/(?<!s)s$/, 3],
];

/** A word as the index keeps it: lower case, its ending dropped; none for a stop word. */
function term(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  for (const [ending, rest] of ENDINGS) {
    const stem = lower.replace(ending, '');
    if (stem !== lower && stem.length >= rest) return stem;
  }
  return lower;
}

/** The `limit` tools that fit `query` best, best first; none when no word of it matches. */
export function searchTools(query: string, tools: readonly ToolSpec[], limit: number): ToolSpec[] {
  const index = new MiniSearch<ToolSpec>({
    idField: 'name',
    fields: ['words', 'description'],
    extractField: (tool, field) => (field === 'words' ? tool.name : tool[field as 'description']),
    tokenize: words,
    processTerm: term,
    searchOptions: {
      // A name's words say more than a description's.
      boost: { words: 2 },
      prefix: (word) => word.length > 2,
      fuzzy: (word) => (word.length > 4 ? 1 : false),
    },
  });
  index.addAll(tools);
  const byName = new Map(tools.map((t) => [t.name, t]));
  return index
    .search(query)
    .slice(0, limit)
    .map((hit) => byName.get(hit.id as string)!);
}
