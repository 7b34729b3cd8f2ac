import { pageMarker } from '../../markers.ts';
import { codePointBoundary } from '../../text.ts';
import { errorResult, type ToolOutcome } from '../../ports/tools.ts';

export type ContinuationRequest =
  { toolCallId: string; offset: number; pattern?: string } | { error: string };

/** Validates get_continuation arguments; the error text goes back to the model as JSON. */
export function parseContinuationArgs(args: Record<string, unknown>): ContinuationRequest {
  const { tool_call_id: toolCallId, offset, pattern } = args;
  if (typeof toolCallId !== 'string' || toolCallId.length === 0) {
    return { error: 'tool_call_id must be a non-empty string' };
  }
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) {
    return { error: `offset must be a non-negative integer, got ${JSON.stringify(offset)}` };
  }
  if (pattern === undefined || pattern === null) return { toolCallId, offset };
  if (typeof pattern !== 'string' || pattern.length === 0) {
    return {
      error: `pattern must be a non-empty string, got ${JSON.stringify(pattern)}; leave it out to read a page`,
    };
  }
  return { toolCallId, offset, pattern };
}

/**
 * One page of a stored result, with a marker saying where it lies and, while more remains, the next
 * offset.
 */
export function readContinuationPage(
  full: string,
  toolCallId: string,
  offset: number,
  chunkChars: number,
): ToolOutcome {
  const total = full.length;
  if (offset >= total)
    return errorResult(`offset ${offset} is past the end of the result`, {
      tool_call_id: toolCallId,
      total_chars: total,
    });
  const start = codePointBoundary(full, offset);
  let end = codePointBoundary(full, start + chunkChars);
  // A chunk of one character would split a pair: take the whole code point instead.
  if (end <= start) end = Math.min(total, start + 2);
  return {
    content: `${full.slice(start, end)}\n${pageMarker(toolCallId, start, end, total)}`,
    isError: false,
  };
}
