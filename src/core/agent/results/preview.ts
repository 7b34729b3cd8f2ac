import { previewedTotal, previewMarker, previewSpans } from '../../markers.ts';
import type { Message } from '../../ports/conversation.ts';
import type { PreviewedResult } from '../../ports/turns.ts';
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
  return [head, marker, tail].filter(Boolean).join('\n');
}

/** The longest preview marker of a result: what a preview of it keeps room for. */
const markerRoom = (toolCallId: string, total: number) =>
  previewMarker(toolCallId, total, total, total).length + 2;

/**
 * A preview of `full` no longer than `chars`, its head and tail in the proportion of `sizes`: a
 * result's share of what the window can take. Where its text would be shorter than its marker,
 * the marker alone: one line naming the result and how to read it, which is longer than `chars`
 * only when the marker is.
 */
export function previewWithin(
  full: string,
  toolCallId: string,
  chars: number,
  sizes: PreviewSizes,
): string {
  const total = originalLength(full);
  const marker = markerRoom(toolCallId, total);
  const text = chars - marker;
  if (text < marker) return buildPreview(full, toolCallId, { headChars: 0, tailChars: 0 }, total);
  const head = Math.ceil((text * sizes.headChars) / Math.max(1, sizes.headChars + sizes.tailChars));
  return buildPreview(full, toolCallId, { headChars: head, tailChars: text - head }, total);
}

/**
 * The results of turn `turn` that the model was sent as previews, in the order it called them: a
 * tool message stored as a preview of its own call (the transcript holds what was sent).
 */
export function previewedResults(transcript: readonly Message[], turn: number): PreviewedResult[] {
  const names = new Map<string, string>();
  const previewed: PreviewedResult[] = [];
  for (const m of transcript) {
    if (m.turn !== turn) continue;
    if (m.role === 'assistant') for (const call of m.toolCalls ?? []) names.set(call.id, call.name);
    if (m.role === 'tool' && previewSpans(m.content)?.toolCallId === m.toolCallId)
      previewed.push({ toolCallId: m.toolCallId, toolName: names.get(m.toolCallId) ?? '' });
  }
  return previewed;
}
