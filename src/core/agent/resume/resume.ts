import { flagsOf } from '../calls/accepted-calls.ts';
import { interruptedCallMarker } from '../../markers.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import { errorResult, type ToolFlags, type ToolOutcome, type ToolSpec } from '../../ports/tools.ts';

/** The user message the agent adds when a reply was cut at max_tokens. */
export const CONTINUE_PROMPT = 'Continue from where you left off.';

/** How far one turn got, read back from the stored transcript. */
export interface TurnProgress {
  /** The reply so far: the assistant text after the turn's last tool round, in order. */
  replyParts: string[];
  /** The final answer is stored; the model has nothing left to do. */
  finished: boolean;
  toolIterations: number;
  continuations: number;
}

const isContinuePrompt = (m: Message) =>
  m.role === 'user' && m.content === CONTINUE_PROMPT && m.inboxId === undefined;

/**
 * Where `turn` stands, so a turn cut short by a crash goes on from its last stored step instead
 * of starting over. The agent stores a cut-off reply together with its continue prompt, so a
 * turn whose last message is a plain assistant message has its final answer.
 */
export function turnProgress(
  transcript: readonly Message[],
  turn: number,
  tools: readonly ToolSpec[],
): TurnProgress {
  const own = transcript.filter((m) => m.turn === turn);
  const rounds = own.flatMap((m) =>
    m.role === 'assistant' && m.toolCalls?.length ? [m.toolCalls] : [],
  );
  const replyParts: string[] = [];
  for (let i = own.length - 1; i >= 0; i--) {
    const m = own[i]!;
    if (m.role === 'assistant' && !m.toolCalls?.length) replyParts.unshift(m.content);
    else if (!isContinuePrompt(m)) break;
  }
  const last = own.at(-1);
  return {
    replyParts,
    finished: last?.role === 'assistant' && !last.toolCalls?.length,
    toolIterations: rounds.filter((calls) =>
      calls.some((c) => !flagsOf(tools, c.name).freeIteration),
    ).length,
    continuations: own.filter(isContinuePrompt).length,
  };
}

/**
 * The calls of the turn's last stored round that have no result: a crash (or shutdown) came
 * between storing them and storing their results.
 */
export function unansweredCalls(transcript: readonly Message[], turn: number): ToolCall[] {
  const own = transcript.filter((m) => m.turn === turn);
  const last = [...own].reverse().find((m) => m.role === 'assistant');
  if (last?.role !== 'assistant' || !last.toolCalls?.length) return [];
  const answered = new Set(own.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  return last.toolCalls.filter((c) => !answered.has(c.id));
}

/** A call of this tool may be sent again when whether it took effect is unknown. */
export const safeToRepeat = (flags: ToolFlags): boolean =>
  Boolean(flags.readOnly || flags.idempotent);

/**
 * What a resumed turn does with the calls it finds unanswered, whose outcome is unknown (each was
 * stored before it was sent, so it may have run): a call of a read-only or idempotent tool is sent
 * again; any other (a tool no longer listed among them) is answered with `interruptedCallMarker`,
 * and never sent twice.
 */
export function resumePlan(
  calls: readonly ToolCall[],
  tools: readonly ToolSpec[],
): { resend: ToolCall[]; answered: Map<string, ToolOutcome> } {
  const resend: ToolCall[] = [];
  const answered = new Map<string, ToolOutcome>();
  for (const call of calls) {
    if (safeToRepeat(flagsOf(tools, call.name))) resend.push(call);
    else answered.set(call.id, errorResult(interruptedCallMarker(call.name)));
  }
  return { resend, answered };
}

/**
 * The result kept of a call the turn's signal cut short: a tool that may be called again keeps its
 * own (the model may call it again); for any other, the model reads that the call may or may not
 * have taken effect.
 */
export function cutShortResult(
  outcome: ToolOutcome,
  name: string,
  tools: readonly ToolSpec[],
): ToolOutcome {
  if (!outcome.cutShort || safeToRepeat(flagsOf(tools, name))) return outcome;
  return { ...errorResult(interruptedCallMarker(name)), cutShort: true };
}
