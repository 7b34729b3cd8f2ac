import { GET_CONTINUATION } from './results/continuation.ts';
import type { Message } from '../ports/conversation.ts';

/** The user message the agent adds when a reply was cut at max_tokens. */
export const CONTINUE_PROMPT = 'Continue from where you left off.';

/** How far one turn got, read back from the stored transcript. */
export interface TurnProgress {
  /** The reply so far: the assistant text after the turn's last tool round, in order. */
  replyParts: string[];
  /** The final answer is stored; the model has nothing left to do. */
  finished: boolean;
  toolIterations: number;
  continuationPages: number;
  continuations: number;
}

const isContinuePrompt = (m: Message) => m.role === 'user' && m.content === CONTINUE_PROMPT && m.inboxId === undefined;

/**
 * Where `turn` stands, so a turn cut short by a crash goes on from its last stored step instead
 * of starting over. The agent stores a cut-off reply together with its continue prompt, so a
 * turn whose last message is a plain assistant message has its final answer.
 */
export function turnProgress(transcript: readonly Message[], turn: number): TurnProgress {
  const own = transcript.filter((m) => m.turn === turn);
  const rounds = own.flatMap((m) => (m.role === 'assistant' && m.toolCalls?.length ? [m.toolCalls] : []));
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
    toolIterations: rounds.filter((calls) => calls.some((c) => c.name !== GET_CONTINUATION)).length,
    continuationPages: rounds.flat().filter((c) => c.name === GET_CONTINUATION).length,
    continuations: own.filter(isContinuePrompt).length,
  };
}
