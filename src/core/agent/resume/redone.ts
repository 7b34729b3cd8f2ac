import { resumePlan, turnProgress, unansweredCalls } from './resume.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { ToolSpec } from '../../ports/tools.ts';

/** What a resumed turn starts again of the attempt that was cut short. */
export interface RedoneWork {
  modelRequests: number;
  toolCalls: number;
}

/**
 * What resuming `turn` starts again: the calls of its last round left unanswered that are sent
 * again (see `resumePlan`; the rest are answered as interrupted, and calls that wait for a person's
 * decision were never running); else, when no final answer is stored, the model request the cut
 * attempt was waiting on.
 */
export function redoneWork(
  transcript: readonly Message[],
  turn: number,
  tools: readonly ToolSpec[],
  /** Calls taken up where they stand, not started again: awaiting a decision, or a task followed. */
  waitsForDecision: (call: ToolCall) => boolean,
): RedoneWork {
  const unanswered = unansweredCalls(transcript, turn);
  if (unanswered.length > 0) {
    const running = unanswered.filter((call) => !waitsForDecision(call));
    return { modelRequests: 0, toolCalls: resumePlan(running, tools).resend.length };
  }
  return { modelRequests: turnProgress(transcript, turn, tools).finished ? 0 : 1, toolCalls: 0 };
}
