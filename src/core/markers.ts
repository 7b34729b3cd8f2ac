/**
 * Every note Spool puts into a tool result in place of text it left out. The model reads these
 * and acts on them, and they are part of request prefixes that prompt caches key on: each is a
 * pure function of its arguments, and this module alone owns their wording.
 */

const call = (toolCallId: string, offset: number) => `get_continuation(tool_call_id="${toolCallId}", offset=${offset})`;
const BOTH_WAYS = 'or give it a pattern to find lines anywhere in the result';

/** Between the head and the tail of a preview. */
export function previewMarker(toolCallId: string, shown: number, total: number, next: number): string {
  return `[truncated — showing ${shown}/${total} chars. Read on with ${call(toolCallId, next)}, ${BOTH_WAYS}.]`;
}

/** Room a preview (or a page) keeps for its marker and the line breaks around it: the longest marker, with a 64-char id. */
export const PREVIEW_MARKER_CHARS = previewMarker('i'.repeat(64), 999_999_999, 999_999_999, 999_999_999).length + 2;

// Also reads the wording of earlier versions, still held in stored transcripts.
const PREVIEW_TOTAL = /\[truncated — showing \d+\/(\d+) chars\. (?:Read on with|Call) get_continuation/;

/** The size of the full result behind a preview, or undefined when `content` is not one. */
export function previewedTotal(content: string): number | undefined {
  const match = PREVIEW_TOTAL.exec(content);
  return match ? Number(match[1]) : undefined;
}

/** After a page of a result that goes on. */
export function pageMarker(toolCallId: string, start: number, end: number, total: number): string {
  return `[showing ${start}-${end}/${total} chars. Read on with ${call(toolCallId, end)}, ${BOTH_WAYS}.]`;
}

/** In place of an old result: what it was, and how to read it again. */
export function clearedMarker(toolCallId: string, description: string): string {
  return `[Old tool result cleared -- ${description}; call ${call(toolCallId, 0)} to read it again]`;
}

/** In place of a page, matches or hits the model has moved past: they are derived, so asking again is cheap. */
export function movedPastMarker(toolName: string, args: string, chars: number): string {
  return `[${chars} chars of ${toolName} output, read in an earlier step, left out here; call ${toolName} with ${args} to see them again]`;
}

/** After the matches shown, when more follow. */
export function moreMatchesMarker(toolCallId: string, more: number, pattern: string, next: number): string {
  return `[${more} more matching lines; the next: get_continuation(tool_call_id="${toolCallId}", pattern=${JSON.stringify(pattern)}, offset=${next})]`;
}

/** After the part of a result that was stored, when the rest was over the store's cap. */
export function storeCapMarker(kept: number, total: number): string {
  return `[Spool stored only the first ${kept} of ${total} chars of this result (TOOL_RESULT_STORE_MAX_CHARS)]`;
}
