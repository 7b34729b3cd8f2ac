import { spanChars, subtract, unite, type Span } from './spans.ts';

/**
 * Every note Spool puts into a tool result in place of text it left out, or of a result it never
 * got. The model reads these and acts on them, and they are part of request prefixes that prompt
 * caches key on: each is a pure function of its arguments, and this module alone owns their
 * wording.
 */

/** The call that reads a stored result from `offset`, as the model writes it and people read it. */
export const continuationCall = (toolCallId: string, offset: number) =>
  `get_continuation(tool_call_id="${toolCallId}", offset=${offset})`;
const call = continuationCall;
const BOTH_WAYS = 'or give it a pattern to find lines anywhere in the result';

/** Between the head and the tail of a preview. */
export function previewMarker(
  toolCallId: string,
  shown: number,
  total: number,
  next: number,
): string {
  return `[truncated — showing ${shown}/${total} chars. Read on with ${call(toolCallId, next)}, ${BOTH_WAYS}.]`;
}

/**
 * Room a preview (or a page) keeps for its marker and the line breaks around it: the longest
 * marker, with a 64-char id.
 */
export const PREVIEW_MARKER_CHARS =
  previewMarker('i'.repeat(64), 999_999_999, 999_999_999, 999_999_999).length + 2;

// Also reads the wording of earlier versions, still held in stored transcripts.
const PREVIEW_TOTAL =
  /\[truncated — showing \d+\/(\d+) chars\. (?:Read on with|Call) get_continuation/;

/** The size of the full result behind a preview, or undefined when `content` is not one. */
export function previewedTotal(content: string): number | undefined {
  const match = PREVIEW_TOTAL.exec(content);
  return match ? Number(match[1]) : undefined;
}

/**
 * After each page as stored: where it lies in the result. The request shows `pageInViewMarker`
 * instead.
 */
export function pageMarker(toolCallId: string, start: number, end: number, total: number): string {
  const next =
    end < total ? `. Read on with ${call(toolCallId, end)}, ${BOTH_WAYS}.` : ': the end of it.';
  return `[showing ${start}-${end}/${total} chars of "${toolCallId}"${next}]`;
}

const PAGE =
  /\n\[showing (\d+)-(\d+)\/(\d+) chars of "([^"\n]+)"(?:\. Read on with [^\n]*|: the end of it\.)\]$/;

/** A stored page: its text and where it lies in which result; undefined for anything else. */
export function parsePage(
  content: string,
): { toolCallId: string; text: string; span: Span; total: number } | undefined {
  const match = PAGE.exec(content);
  if (!match) return undefined;
  const [start, end, total] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const text = content.slice(0, match.index);
  return text.length === end - start
    ? { toolCallId: match[4]!, text, span: [start, end], total }
    : undefined;
}

const PREVIEW =
  /\[truncated — showing (\d+)\/(\d+) chars\. Read on with get_continuation\(tool_call_id="([^"\n]+)", offset=(\d+)\)/;

/** What a preview shows of its result: the head and the tail. */
export function previewSpans(
  content: string,
): { toolCallId: string; spans: Span[]; total: number } | undefined {
  const match = PREVIEW.exec(content);
  if (!match) return undefined;
  const [shown, total, head] = [Number(match[1]), Number(match[2]), Number(match[4])];
  return {
    toolCallId: match[3]!,
    spans: unite([
      [0, head],
      [total - (shown - head), total],
    ]),
    total,
  };
}

/** Spans as `0-4000, 9000-9500`: at most three, so that a marker's length is bounded. */
function spanList(spans: readonly Span[]): string {
  const listed = spans
    .slice(0, 3)
    .map(([a, b]) => `${a}-${b}`)
    .join(', ');
  return spans.length > 3 ? `${listed} and ${spans.length - 3} more` : listed;
}

/**
 * After a page as the request shows it: what of the result the model now has in view, what it
 * read this turn that gave way to the budget, and where to read on (`next`) if anything is unread.
 */
export function pageInViewMarker(
  toolCallId: string,
  page: Span,
  seen: { inView: readonly Span[]; read: readonly Span[] },
  total: number,
  next: number | undefined,
): string {
  const all = spanChars(seen.inView) === total;
  const gaveWay = seen.read.flatMap((span) => subtract(span, seen.inView));
  const held = all
    ? `you have all ${total} chars of it in view`
    : `you have ${spanList(seen.inView)} of ${total} in view (${spanChars(seen.inView)} chars)`;
  const left = gaveWay.length
    ? `; ${spanList(gaveWay)} read earlier this turn, left out to fit the budget`
    : '';
  const on = next === undefined ? '' : ` Read on with ${call(toolCallId, next)}, ${BOTH_WAYS}.`;
  return `[showing ${page[0]}-${page[1]}/${total} chars of "${toolCallId}"; ${held}${left}.${on}]`;
}

/** Inside a page, in place of a part that an earlier message of the request shows already. */
export const inViewAboveNote = (span: Span): string => `[${span[0]}-${span[1]}: in view above]`;

// The longest marker: a 64-char id, nine-digit offsets, more spans in view and given way than are
// listed.
const spansFrom = (first: number): Span[] =>
  [0, 2, 4, 6].map((i) => [(first + i) * 100_000_000, (first + i) * 100_000_000 + 99_999_999]);
/**
 * Room a page keeps for its longest marker as the request shows it, and two notes of what is in
 * view above.
 */
export const PAGE_MARKER_CHARS =
  pageInViewMarker(
    'i'.repeat(64),
    spansFrom(1)[0]!,
    { inView: spansFrom(1), read: spansFrom(2) },
    999_999_999,
    999_999_999,
  ).length +
  2 * (inViewAboveNote(spansFrom(1)[0]!).length + 1) +
  1;

/**
 * In place of the pages of one result read earlier: left out for the turn's budget, or compacted
 * after their turn.
 */
export function pageLeftOutMarker(toolCallId: string, spans: readonly Span[]): string {
  return `[chars ${spanList(spans)} of "${toolCallId}", read earlier, left out here; read them again with ${call(toolCallId, spans[0]![0])}]`;
}

/** In place of an old result: what it was, and how to read it again. */
export function clearedMarker(toolCallId: string, description: string): string {
  return `[Old tool result cleared -- ${description}; ${call(toolCallId, 0)} reads it again]`;
}

/**
 * In place of the calls of turns past the horizon, at the start of the request: what each ran,
 * and the alias get_continuation reads its result by; `more` older ones are left to search.
 */
export function pastCallsNote(lines: readonly string[], more: number): string {
  const older = more ? `\n(${more} older calls: search_history finds them)` : '';
  return `[Tools run in earlier turns of this thread, results stored (read one with get_continuation and its id):${older}\n${lines.join('\n')}]`;
}

/**
 * In place of a page, matches or hits the model has moved past: they are derived, so asking again
 * is cheap.
 */
export function movedPastMarker(toolName: string, args: string, chars: number): string {
  return `[${chars} chars of ${toolName} output, read in an earlier step, left out here; call ${toolName} with ${args} to see them again]`;
}

/** After the part of matching lines or search hits that fits the context window. */
export const viewCutMarker = (chars: number): string =>
  `[${chars} more chars cut here to fit the model's context window; ask for fewer at a time]`;

/** After the matches shown, when more follow. */
export function moreMatchesMarker(
  toolCallId: string,
  more: number,
  pattern: string,
  next: number,
): string {
  return `[${more} more matching lines; the next: get_continuation(tool_call_id="${toolCallId}", pattern=${JSON.stringify(pattern)}, offset=${next})]`;
}

/** After the part of a result that was stored, when the rest was over the store's cap. */
export function storeCapMarker(kept: number, total: number): string {
  return `[Spool stored only the first ${kept} of ${total} chars of this result (TOOL_RESULT_STORE_MAX_CHARS)]`;
}

/**
 * In place of the result of a call that was sent and then cut short (a crash, shutdown, a lost
 * lease, a Stop) when its tool is neither read-only nor idempotent: Spool does not send it again,
 * and the model must not either without looking first.
 */
export const interruptedCallMarker = (toolName: string): string =>
  `This call to ${toolName} was interrupted before it finished, and may or may not have taken effect: no result was recorded. Do not call it again blindly: first check whether it took effect (with a tool that only reads, or by asking the person), and if you cannot tell, say so.`;
