import { pageMarker } from '../../markers.ts';
import { codePointBoundary } from '../../text.ts';
import type { ToolOutcome, ToolSpec } from '../../ports/tools.ts';

export const GET_CONTINUATION = 'get_continuation';

export const getContinuationSpec: ToolSpec = {
  name: GET_CONTINUATION,
  description:
    'Read more of a tool result that was truncated or cleared from the context: a page from an offset, ' +
    'or, with a pattern, only the lines that match it, each with the offset to read on from. ' +
    'Use a pattern to find something in a long result instead of paging through it.',
  parameters: {
    type: 'object',
    properties: {
      tool_call_id: { type: 'string', description: 'The id of the tool call whose result to read.' },
      offset: { type: 'integer', minimum: 0, description: 'Character offset to start reading (or searching) from.' },
      pattern: {
        type: 'string',
        description: 'Optional. A regular expression (case-insensitive; matched as plain text if it is not a valid one): return the matching lines instead of a page.',
      },
    },
    required: ['tool_call_id', 'offset'],
    additionalProperties: false,
  },
  flags: { derived: true, bounded: true, freeIteration: true },
};

export type ContinuationRequest = { toolCallId: string; offset: number; pattern?: string } | { error: string };

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
    return { error: `pattern must be a non-empty string, got ${JSON.stringify(pattern)}; leave it out to read a page` };
  }
  return { toolCallId, offset, pattern };
}

/** An error result the model reads and acts on: `{"error": …}`. */
export const errorResult = (message: string): ToolOutcome => ({ content: continuationError(message), isError: true });

export function continuationError(message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: message, ...extra });
}

/** One page of a stored result, with a marker saying where it lies and, while more remains, the next offset. */
export function readContinuationPage(full: string, toolCallId: string, offset: number, chunkChars: number): string {
  const total = full.length;
  if (offset >= total) {
    return continuationError(`offset ${offset} is past the end of the result`, { tool_call_id: toolCallId, total_chars: total });
  }
  const start = codePointBoundary(full, offset);
  let end = codePointBoundary(full, start + chunkChars);
  // A chunk of one character would split a pair: take the whole code point instead.
  if (end <= start) end = Math.min(total, start + 2);
  return `${full.slice(start, end)}\n${pageMarker(toolCallId, start, end, total)}`;
}
