import { errorResult, parseContinuationArgs, readContinuationPage } from './continuation.ts';
import { grepResult } from './grep.ts';
import { userMessageText } from '../context/long-messages.ts';
import type { Conversation, Message } from '../../ports/conversation.ts';
import type { StorePort } from '../../ports/store.ts';
import type { ToolOutcome } from '../../ports/tools.ts';

export interface ContinuationLimits {
  /** Pages one turn may read before the model is told to answer. */
  maxContinuationPages: number;
  continuationChunkChars: number;
}

/** What a turn has read so far; `continuationPages` is counted up here. */
export interface ReadingState {
  conversation: Conversation;
  /** Where a long user message is read from: it is in the transcript, not among the results. */
  transcript: readonly Message[];
  continuationPages: number;
  /** What the request keeps of this turn's reading: a page is never larger. */
  viewChars: number;
}

/**
 * get_continuation, the tool the core supplies: a page of a stored result (or a long user
 * message) from an offset, or its lines that match a pattern. A page is never larger than the turn's view (see `viewOfReading`).
 */
export async function readStoredResult(store: StorePort, state: ReadingState, args: Record<string, unknown>, limits: ContinuationLimits): Promise<ToolOutcome> {
  const request = parseContinuationArgs(args);
  if ('error' in request) return errorResult(request.error);
  if (++state.continuationPages > limits.maxContinuationPages) {
    return errorResult(`get_continuation page limit (${limits.maxContinuationPages}) reached for this turn. Answer with what you have read.`);
  }
  const full = userMessageText(state.transcript, request.toolCallId) ?? (await store.readToolResult(state.conversation, request.toolCallId));
  if (full === undefined) return errorResult(`No stored tool result with tool_call_id "${request.toolCallId}"`);
  if (request.pattern !== undefined) return grepResult(full, request.toolCallId, request.pattern, Math.min(request.offset, full.length));
  const chunk = Math.min(state.viewChars, limits.continuationChunkChars);
  return { content: readContinuationPage(full, request.toolCallId, request.offset, chunk), isError: request.offset >= full.length };
}
