import { headAtLineBreak, tailAtLineBreak } from './text.ts';

export interface PreviewSizes {
  headChars: number;
  tailChars: number;
}

/** The model reads this marker and acts on it: keep its wording byte-stable. */
export function truncationMarker(toolCallId: string, shown: number, total: number, next: number): string {
  return `[truncated — showing ${shown}/${total} chars. Call get_continuation with tool_call_id="${toolCallId}" offset=${next} to read more]`;
}

const MARKER_TOTAL = /\[truncated — showing \d+\/(\d+) chars\. Call get_continuation/;

/**
 * Size of the full result behind `content`: a preview names it in its marker, anything else is
 * whole. Lets later compaction describe the original and not the preview.
 */
export function originalLength(content: string): number {
  const match = MARKER_TOTAL.exec(content);
  return match ? Number(match[1]) : content.length;
}

/**
 * Head and tail of `full` around a marker pointing at where the head stops. Offsets are in the
 * full text, so a preview of a preview still points into the stored original.
 */
export function buildPreview(full: string, toolCallId: string, sizes: PreviewSizes, total = originalLength(full)): string {
  const head = headAtLineBreak(full, sizes.headChars);
  const tailBudget = Math.min(sizes.tailChars, Math.max(0, full.length - head.length));
  const tail = tailBudget > 0 ? tailAtLineBreak(full, tailBudget) : '';
  const marker = truncationMarker(toolCallId, head.length + tail.length, total, head.length);
  return tail ? `${head}\n${marker}\n${tail}` : `${head}\n${marker}`;
}
