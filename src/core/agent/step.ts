import type { Fit } from './context/request.ts';
import type { Message, ToolCall } from '../ports/conversation.ts';
import type { LlmResponse } from '../ports/llm.ts';
import type { TurnReply } from '../ports/turns.ts';

// The vocabulary of one step of the turn loop, imported by what decides it (next-step.ts), what
// counts it (turn-state.ts) and what reports it (hooks.ts); it imports none of them.

/** How a request to the model came back. */
export type ModelOutcome =
  | { kind: 'response'; response: LlmResponse; calls: ToolCall[]; toolChoice: 'auto' | 'none' }
  /** The request does not fit the model's window (the server said so, or the estimate did). */
  | { kind: 'too_long'; readChars: number };

/**
 * What the turn does next. The loop acts on this and on nothing else; `store` is written before
 * anything else happens.
 */
export type Step =
  /** Run the calls; they are stored with the message that made them, before any runs. */
  | { action: 'run_calls'; calls: ToolCall[]; countsIteration: boolean; store: Message[] }
  /**
   * The files shared with the user message become results of calls Spool makes for them, before
   * the model is first asked: previewed, paged, searched and compacted like any result.
   */
  | { action: 'share_files'; calls: ToolCall[]; store: Message[] }
  /**
   * A restarted turn's unanswered calls, stored already, without asking the model again: those that
   * wait for approval run once decided, those of read-only or idempotent tools are sent again, and
   * the rest are answered as interrupted (`resumePlan`).
   */
  | { action: 'resume_calls'; calls: ToolCall[] }
  /**
   * Cut off at the output limit with text: store the part with the continue prompt, and ask for the
   * rest.
   */
  | { action: 'continue'; part: string; store: Message[] }
  /** Cut off before any text, so the budget went on reasoning: ask once more with a larger one. */
  | { action: 'retry_larger'; maxTokens: number }
  /** Too long for the window: send it again, fitted smaller. */
  | { action: 'compact'; fit: Fit }
  | { action: 'answer'; store: Message[]; reply: TurnReply }
  /** The turn ends without a plain answer. */
  | {
      action: 'stop';
      why: 'nothing new' | 'max continuations' | 'too long';
      store: Message[];
      reply: TurnReply;
    };
