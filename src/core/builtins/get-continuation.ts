import { userMessageText } from '../agent/context/long-messages.ts';
import { aliasedCallId } from '../agent/context/microcompact.ts';
import { readingChars } from '../agent/context/reading-view.ts';
import { parseContinuationArgs, readContinuationPage } from '../agent/results/continuation.ts';
import { grepResult } from '../agent/results/grep.ts';
import { pageChars, type PageSizes } from '../agent/results/page-size.ts';
import type { Message } from '../ports/conversation.ts';
import { typedStoreErrors, type StorePort } from '../ports/store.ts';
import { errorResult, type Tool, type ToolOutcome } from '../ports/tools.ts';

export interface PageOptions extends PageSizes {
  /** Pages (and greps) one turn may read before the model is told to answer. */
  maxPages: number;
}

/** The calls of the step being run: the newest assistant message's. */
function callsOfStep(transcript: readonly Message[]): number {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role === 'assistant') return Math.max(1, m.toolCalls?.length ?? 0);
  }
  return 1;
}

/**
 * get_continuation, a built-in tool like any other: a page of a stored result (or of a long user
 * message) from an offset, or its lines that match a pattern. A page reads the rest of a result at
 * once when the window and the turn's budget hold it (see `pageChars`), and is never larger than
 * what the turn keeps in view of its reading (see `viewOfReading`).
 */
export function getContinuationTool(store: StorePort, options: PageOptions): Tool<ToolOutcome> {
  const results = typedStoreErrors(store);
  return {
    spec: {
      name: 'get_continuation',
      description:
        'Read more of a tool result that was truncated or cleared from the context: a page from an offset, ' +
        'or, with a pattern, only the lines that match it, each with the offset to read on from. ' +
        'Use a pattern to find something in a long result instead of paging through it.',
      parameters: {
        type: 'object',
        properties: {
          tool_call_id: {
            type: 'string',
            description: 'The id of the tool call whose result to read.',
          },
          offset: {
            type: 'integer',
            minimum: 0,
            description: 'Character offset to start reading (or searching) from.',
          },
          pattern: {
            type: 'string',
            description:
              'Optional. A regular expression (case-insensitive; matched as plain text if it is not a valid one): return the matching lines instead of a page.',
          },
        },
        required: ['tool_call_id', 'offset'],
        additionalProperties: false,
      },
      flags: {
        derived: true,
        bounded: true,
        freeIteration: true,
        maxCallsPerTurn: options.maxPages,
        readOnly: true,
      },
      // ASCII only: one character outside it makes every request body a two-byte string, which
      // costs 8 ms a request to encode at 2,000 messages (measured, BENCHMARKS.md).
      guidance: [
        'Long tool results are shown as a head and tail preview with a [truncated ...] marker: call get_continuation with the tool_call_id and offset it names to read on, or with a pattern to find the lines you need anywhere in the result, before you rely on what is missing.',
        "Pages you read stay in view for the rest of the turn; each page's marker says how much of the result you have in view, and what you read that had to be left out.",
        'Old tool results may be cleared from the context the same way; get_continuation reads them again.',
      ].join('\n'),
    },
    async run(args, { conversation, turn, reading, onReading }) {
      const parsed = parseContinuationArgs(args);
      if ('error' in parsed) return errorResult(parsed.error);
      // A finished turn's call is shown under its alias (see microcompact): read the stored id.
      const request = {
        ...parsed,
        toolCallId: aliasedCallId(reading.transcript, parsed.toolCallId) ?? parsed.toolCallId,
      };
      const full =
        userMessageText(reading.transcript, request.toolCallId) ??
        (await results.readToolResult(conversation, request.toolCallId));
      if (full === undefined)
        return errorResult(`No stored tool result with tool_call_id "${request.toolCallId}"`);
      const from = Math.min(request.offset, full.length);
      if (request.pattern !== undefined) {
        onReading?.({ from, to: full.length, of: full.length, pattern: request.pattern });
        return grepResult(full, request.toolCallId, request.pattern, from);
      }
      const room = {
        restChars: Math.max(0, full.length - request.offset),
        viewChars: reading.viewChars,
        readChars: readingChars(reading.transcript, turn),
        roomTokens: reading.roomTokens,
        calls: callsOfStep(reading.transcript),
      };
      const size = pageChars(room, options);
      if (from < full.length)
        onReading?.({ from, to: Math.min(full.length, from + size), of: full.length });
      return readContinuationPage(full, request.toolCallId, request.offset, size);
    },
  };
}
