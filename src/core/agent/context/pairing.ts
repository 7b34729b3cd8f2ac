import type { Message, ToolCall, ToolMessage } from '../../ports/conversation.ts';

const VALID_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const INTERRUPTED_RESULT = JSON.stringify({
  error:
    'No result was recorded for this tool call: it was interrupted before it finished. Call the tool again if you still need it.',
});

function sanitizeName(call: ToolCall): ToolCall {
  if (VALID_TOOL_NAME.test(call.name)) return call;
  const name = call.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'unknown_tool';
  return { ...call, name };
}

/**
 * Makes a history the Chat Completions API accepts, whatever happened to it (crashes between a
 * call and its result, reordered writes, replayed responses):
 * - every assistant tool call is immediately followed by exactly one result, a synthetic error
 *   result when none exists;
 * - a result that sits anywhere else is moved behind its call; a result with no call is dropped;
 * - an assistant message with neither text nor calls is dropped;
 * - a tool call id that occurs again, even within one message, is dropped (the first is kept),
 *   and so is a second result; a call with an empty id is dropped, with any result naming it.
 * Pure: the stored transcript is never changed, only the request built from it.
 */
export function repairToolPairing(messages: readonly Message[]): Message[] {
  const resultById = new Map<string, ToolMessage>();
  for (const m of messages) {
    if (m.role === 'tool' && !resultById.has(m.toolCallId)) resultById.set(m.toolCallId, m);
  }

  const seenCalls = new Set<string>();
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role === 'tool') continue; // re-emitted right after its call below
    if (m.role !== 'assistant' || !m.toolCalls?.length) {
      // The API refuses an assistant message with neither text nor calls.
      if (m.role !== 'assistant' || m.content !== '') out.push(m);
      continue;
    }
    const calls: ToolCall[] = [];
    for (const c of m.toolCalls) {
      // A repeat (in this message or an earlier one) is dropped; so is a call with no id, which no
      // result can answer.
      if (c.id === '' || seenCalls.has(c.id)) continue;
      seenCalls.add(c.id);
      calls.push(sanitizeName(c));
    }
    if (calls.length === 0) {
      if (m.content) out.push({ role: 'assistant', content: m.content, turn: m.turn });
      continue;
    }
    // The message itself when nothing changed, so `countRepairs` sees it kept.
    out.push(
      calls.length === m.toolCalls.length && calls.every((c, i) => c === m.toolCalls![i])
        ? m
        : { ...m, toolCalls: calls },
    );
    for (const c of calls) {
      const result = resultById.get(c.id);
      out.push(
        result ?? { role: 'tool', toolCallId: c.id, content: INTERRUPTED_RESULT, turn: m.turn },
      );
    }
  }
  return out;
}

/**
 * How many messages repair dropped, changed or added: what it had to mend (a reordered result is
 * not counted).
 */
export function countRepairs(before: readonly Message[], after: readonly Message[]): number {
  const input = new Set(before);
  const kept = after.filter((m) => input.has(m)).length;
  return before.length - kept + (after.length - kept);
}
