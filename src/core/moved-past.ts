import { movedPastMarker } from './markers.ts';
import type { Message, ToolCall } from './types.ts';

/**
 * Leaves out the output of derived calls (pages, matching lines, search hits) that the model has
 * moved past: everything before the newest step. Each page is then sent once, so a turn's cost
 * grows with the pages it reads, not with their square. The marker depends only on the call and
 * the output's length, and an output never comes back, so request prefixes change once per output.
 */
export function leaveOutMovedPast(messages: readonly Message[]): Message[] {
  let newestStep = -1;
  const calls = new Map<string, ToolCall>();
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || !m.toolCalls?.length) return;
    newestStep = i;
    for (const call of m.toolCalls) calls.set(call.id, call);
  });
  return messages.map((m, i) => {
    if (m.role !== 'tool' || i > newestStep) return m;
    const call = calls.get(m.toolCallId);
    if (!call?.derived) return m;
    return { ...m, content: movedPastMarker(call.name, call.arguments, m.content.length) };
  });
}
