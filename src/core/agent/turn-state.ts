import type { Fit } from './context/request.ts';
import type { StepEvent, TurnInfo } from './hooks.ts';
import type { ModelOutcome, Step } from './step.ts';
import type { TurnProgress } from './resume/resume.ts';
import type { PendingCall } from '../ports/turns.ts';

/** What one turn has spent so far. Only `advance` changes it, one step at a time. */
export interface TurnState extends TurnProgress {
  /** Model calls answered so far. */
  steps: number;
  /** Chars of this turn's tool results sent so far, against the turn's budget. */
  resultChars: number;
  /** How the next request is fitted to the model's window; within a turn it only shrinks. */
  fit: Fit;
  /**
   * The output budget of this turn's requests, once raised for a reply cut off before it said
   * anything.
   */
  maxTokens?: number;
}

/** What running a step's calls came to, for the counters and the step event. */
export interface StepRun {
  toolCalls: StepEvent['toolCalls'];
  /** Calls not run, awaiting a person's decision: the turn stops here until they are decided. */
  awaiting: PendingCall[];
  /** Results sent as previews, being over a budget. */
  previewed: number;
  /** Chars of the results as sent. */
  resultChars: number;
}

const NOTHING_RAN: StepRun = { toolCalls: [], awaiting: [], previewed: 0, resultChars: 0 };

export const startState = (progress: TurnProgress, fit: Fit): TurnState => ({
  ...progress,
  steps: 0,
  resultChars: 0,
  fit,
});

/** The state after `step`, once acted on. */
export function advance(state: TurnState, step: Step, run: StepRun = NOTHING_RAN): TurnState {
  const steps = state.steps + 1;
  switch (step.action) {
    case 'run_calls': {
      const toolIterations = state.toolIterations + (step.countsIteration ? 1 : 0);
      // Text next to tool calls was the model thinking aloud: the reply starts again after them.
      return {
        ...state,
        steps,
        toolIterations,
        replyParts: [],
        resultChars: state.resultChars + run.resultChars,
      };
    }
    case 'continue':
      return {
        ...state,
        steps,
        continuations: state.continuations + 1,
        replyParts: [...state.replyParts, step.part],
      };
    case 'retry_larger':
      return { ...state, steps, maxTokens: step.maxTokens };
    case 'compact':
      // The model did not answer: not a step.
      return { ...state, fit: step.fit };
    case 'share_files':
    case 'resume_calls':
      // Nor was it asked; the results count toward the turn's budget like any.
      return { ...state, resultChars: state.resultChars + run.resultChars };
    case 'answer':
    case 'stop':
      return { ...state, steps, finished: true };
  }
}

/** The facts of one model call, for its step event. */
export interface ModelCall {
  outcome: Extract<ModelOutcome, { kind: 'response' }>;
  llmMs: number;
  repairs: number;
  /** What the request held against the spend caps, released by the write of its usage. */
  holdId?: string;
}

/** The event `onStepFinish` gets for a step the model answered, built once the step is acted on. */
export function stepEvent(
  info: TurnInfo,
  state: TurnState,
  step: Step,
  call: ModelCall,
  derivedCalls: number,
  run: StepRun = NOTHING_RAN,
): StepEvent {
  const { response } = call.outcome;
  return {
    ...info,
    step: state.steps,
    action: step.action,
    finishReason: response.finishReason,
    level: state.fit.level,
    usage: response.usage,
    llmMs: call.llmMs,
    repairs: call.repairs,
    toolCalls: run.toolCalls,
    previewed: run.previewed,
    derivedCalls,
  };
}
