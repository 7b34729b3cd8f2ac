import { previewedTotal, previewMarker } from '../../markers.ts';
import { headAtLineBreak, tailAtLineBreak } from '../../text.ts';

export interface PreviewSizes {
  headChars: number;
  tailChars: number;
}

/**
 * Size of the full result behind `content`: a preview names it in its marker, anything else is
 * whole. Lets later compaction describe the original and not the preview.
 */
export function originalLength(content: string): number {
  return previewedTotal(content) ?? content.length;
}

/**
 * Head and tail of `full` around a marker pointing at where the head stops. Offsets are in the
 * full text, so a preview of a preview still points into the stored original.
 */
export function buildPreview(
  full: string,
  toolCallId: string,
  sizes: PreviewSizes,
  total = originalLength(full),
): string {
  const head = headAtLineBreak(full, sizes.headChars);
  const tailBudget = Math.min(sizes.tailChars, Math.max(0, full.length - head.length));
  const tail = tailBudget > 0 ? tailAtLineBreak(full, tailBudget) : '';
  const marker = previewMarker(toolCallId, head.length + tail.length, total, head.length);
  return tail ? `${head}\n${marker}\n${tail}` : `${head}\n${marker}`;
}
