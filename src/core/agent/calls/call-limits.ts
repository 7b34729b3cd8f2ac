import { flagsOf } from './accepted-calls.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { ToolSpec } from '../../ports/tools.ts';

/** The calls of `turn`, in the order they were made: every call is stored before it runs. */
const callsOf = (transcript: readonly Message[], turn: number): ToolCall[] =>
  transcript.flatMap((m) => (m.turn === turn && m.role === 'assistant' ? (m.toolCalls ?? []) : []));

/** Some tool was called this turn more often than its flags allow: the model must answer now. */
export function pastCallLimit(
  tools: readonly ToolSpec[],
  transcript: readonly Message[],
  turn: number,
): boolean {
  const counts = new Map<string, number>();
  for (const { name } of callsOf(transcript, turn)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].some(
    ([name, count]) => count > (flagsOf(tools, name).maxCallsPerTurn ?? Infinity),
  );
}

/** Why `call` may not run: it comes after its tool's last allowed call this turn. */
export function callLimitRefusal(
  tools: readonly ToolSpec[],
  transcript: readonly Message[],
  turn: number,
  call: ToolCall,
): string | undefined {
  const max = flagsOf(tools, call.name).maxCallsPerTurn;
  if (max === undefined) return undefined;
  const position =
    callsOf(transcript, turn)
      .filter((c) => c.name === call.name)
      .findIndex((c) => c.id === call.id) + 1;
  if (position <= max) return undefined;
  return `${call.name} may be called ${max} times in one turn, and that limit is reached. Answer with what you have read.`;
}

/**
 * Calls this turn of tools whose output is a view of stored results: pages, matches, search hits.
 */
export const derivedCallCount = (transcript: readonly Message[], turn: number): number =>
  callsOf(transcript, turn).filter((c) => c.derived).length;
