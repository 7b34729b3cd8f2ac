import type { OverflowLevel } from './context/request.ts';
import type { Logger } from '../logger.ts';
import type { Step } from './step.ts';
import type { RedoReason, TurnStatus } from '../ports/turns.ts';
import type { Conversation, Message } from '../ports/conversation.ts';
import type { FinishReason, LlmUsage } from '../ports/llm.ts';
import type { ToolOutcome, ToolProgress } from '../ports/tools.ts';
import { errorMessage } from '../errors.ts';

/** Where in a conversation a hook is called. */
export interface TurnInfo {
  conversation: Conversation;
  turn: number;
}

/**
 * What a `beforeToolCall` hook decides: run the call, refuse it (the model reads why), or answer
 * it.
 */
export type ToolDecision =
  | { action: 'allow' }
  | { action: 'deny'; reason: string }
  | { action: 'answer'; outcome: ToolOutcome };

/** One model call and the tool calls it made. */
export interface StepEvent extends TurnInfo {
  step: number;
  /** What the turn did with the model's reply (see `nextStep`). */
  action: Step['action'];
  finishReason: FinishReason;
  /** The overflow level the request needed: 0 unless the context was too long. */
  level: OverflowLevel;
  usage?: LlmUsage;
  llmMs: number;
  /** Messages pairing repair had to drop, mend or add in this step's request. */
  repairs: number;
  toolCalls: Array<{ name: string; isError: boolean; durationMs: number }>;
  /** Results of this step sent as previews, being over a budget. */
  previewed: number;
  /**
   * Calls so far this turn of tools whose output is a view of stored results: pages, matches,
   * search hits.
   */
  derivedCalls: number;
}

/**
 * A resumed turn starts again what its cut attempt had started: the model request it waited on, or
 * the calls it was running that are sent again.
 */
export interface RedoneEvent extends TurnInfo {
  reason: RedoReason;
  modelRequests: number;
  toolCalls: number;
}

export interface TurnEvent extends TurnInfo {
  /**
   * `awaiting_approval`: the turn stopped at calls that wait for a decision, to go on once decided.
   */
  status: TurnStatus | 'awaiting_approval';
  steps: number;
  durationMs: number;
}

/**
 * Ways to extend the turn loop without editing it, after vercel/ai's `prepareStep` and
 * `onStepFinish` and openai-agents-js's `callModelInputFilter`. Observers' errors are logged and
 * never fail a turn.
 */
export interface AgentHooks {
  /**
   * The messages of each request after compaction; pairing repair runs after it, as the safety net.
   */
  transformContext?(messages: Message[], info: TurnInfo): Message[];
  beforeToolCall?(
    call: { name: string; args: Record<string, unknown> },
    info: TurnInfo,
  ): ToolDecision | Promise<ToolDecision>;
  onStepFinish?(event: StepEvent): void;
  onTurnFinish?(event: TurnEvent): void;
  /** A resumed turn starts again work its cut attempt had started. */
  onRedone?(event: RedoneEvent): void;
  /** A running call reported progress (an MCP progress notification). */
  onToolProgress?(event: ToolProgressEvent): void;
}

/** A running call's progress, as its server reported it. */
export interface ToolProgressEvent extends TurnInfo {
  toolCallId: string;
  name: string;
  progress: ToolProgress;
}

type Observer = 'onStepFinish' | 'onTurnFinish' | 'onToolProgress' | 'onRedone';

/** Tells an observer; its error is logged, never thrown into the turn it observes. */
export function notify<K extends Observer>(
  hooks: AgentHooks | undefined,
  observer: K,
  event: Parameters<NonNullable<AgentHooks[K]>>[0],
  logger: Logger,
): void {
  try {
    (hooks?.[observer] as ((e: typeof event) => void) | undefined)?.call(hooks, event);
  } catch (error) {
    logger.warn(`The ${observer} hook failed`, { error: errorMessage(error) });
  }
}

/** Several observers of the step and turn events as one set of hooks (metrics and logs, say). */
export function observers(...all: Array<Pick<AgentHooks, Observer>>): Pick<AgentHooks, Observer> {
  return {
    onStepFinish: (event) => all.forEach((o) => o.onStepFinish?.(event)),
    onTurnFinish: (event) => all.forEach((o) => o.onTurnFinish?.(event)),
    onToolProgress: (event) => all.forEach((o) => o.onToolProgress?.(event)),
    onRedone: (event) => all.forEach((o) => o.onRedone?.(event)),
  };
}
