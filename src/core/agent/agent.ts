import { acceptedCalls, flagsOf } from './accepted-calls.ts';
import { parseToolArguments } from './arguments.ts';
import { applyResultBudget, type ResultBudget } from './results/budget.ts';
import { buildRequestMessages, fitAttempts } from './context/request.ts';
import { readStoredResult } from './results/get-continuation.ts';
import { errorResult, GET_CONTINUATION, getContinuationSpec } from './results/continuation.ts';
import { afterCutOff } from './cut-off.ts';
import { notify, type AgentHooks, type StepEvent, type TurnInfo } from './hooks.ts';
import { withLogFields, type Logger } from '../logger.ts';
import type { MicrocompactOptions } from './context/microcompact.ts';
import { OverflowMemory } from './overflow-memory.ts';
import { readingChars } from './context/reading-view.ts';
import { admitResult, type ResultIntake } from './results/result-intake.ts';
import { CONTINUE_PROMPT, turnProgress } from './resume.ts';
import { failedTurn, type TurnResult, type TurnStatus } from './turn-failure.ts';
import { ContextLengthError, type LlmPort, type LlmRequest, type LlmResponse, type LlmUsage } from '../ports/llm.ts';
import { type Conversation, type Message, type ToolCall } from '../ports/conversation.ts';
import { type StepRecords, StoreError, type StorePort, typedStoreErrors } from '../ports/store.ts';
import { type ToolOutcome, type ToolPort, type ToolSpec } from '../ports/tools.ts';
import { wellFormed, wellFormedMessage } from '../well-formed.ts';

export { CONTINUE_PROMPT };

export interface AgentOptions {
  systemPrompt: string;
  budget: ResultBudget;
  continuationChunkChars: number;
  /** get_continuation pages one turn may read before the model is told to answer. */
  maxContinuationPages: number;
  compaction: MicrocompactOptions;
  maxContinuations: number;
  maxToolIterations: number;
  /** What a tool's output goes through before anything reads it: the store's cap, secret masking. */
  resultIntake: ResultIntake;
  /** A longer user message is stored whole and shown to the model as a pageable preview. */
  userMessageMaxChars: number;
  /**
   * The output budget for one more try when a reply is cut off before it says anything (a
   * reasoning model spent the budget thinking); none, no retry.
   */
  retryMaxTokens?: number;
}

export interface AgentDeps {
  llm: LlmPort;
  tools: ToolPort;
  store: StorePort;
  logger: Logger;
  hooks?: AgentHooks;
}

export type { TurnResult, TurnStatus };

export interface TurnOptions {
  /**
   * The inbox row this turn answers. When its user message is already stored, the turn goes on
   * from the stored transcript (a crash or a lease takeover cut it short) instead of starting over.
   */
  inboxId?: string;
  signal?: AbortSignal;
}

/** What one turn has spent so far; reset only by new user input. */
interface TurnState {
  conversation: Conversation;
  turn: number;
  transcript: Message[];
  tools: ToolSpec[];
  continuations: number;
  toolIterations: number;
  continuationPages: number;
  resultChars: number;
  /** What this turn's reading may add up to in a request: the turn's budget, narrowed to fit the model's window. */
  viewChars: number;
  signal: AbortSignal;
  /** The reply so far; text next to tool calls is dropped, since it was the model thinking aloud. */
  replyParts: string[];
  /** The final answer was stored before a crash: nothing is left to ask the model. */
  finished: boolean;
  /** Usage of the latest model call, written with the step it produced. */
  usage?: LlmUsage;
  /** The output budget of this turn's requests, once raised for an empty cut-off reply. */
  maxTokens?: number;
  /** The step so far, for `onStepFinish`. */
  step: Omit<StepEvent, keyof TurnInfo | 'pagesRead'>;
}

const CUT_OFF_NOTE = "\n\n_(This reply was cut off at the model's output limit.)_";

/**
 * The channel-agnostic agent: one `runTurn` per user message. It owns the tool loop and every
 * context-management rule; platforms only hand it text and post back what it returns.
 */
export class Agent {
  private readonly overflow = new OverflowMemory();
  private readonly store: StorePort;

  /** Tools the core itself supplies, run here rather than through the tool port. */
  private readonly ownTools = new Map<string, (state: TurnState, args: Record<string, unknown>) => Promise<ToolOutcome>>([
    [GET_CONTINUATION, (state, args) => readStoredResult(this.store, state, args, this.options)],
  ]);

  constructor(
    private readonly deps: AgentDeps,
    private readonly options: AgentOptions,
  ) {
    this.store = typedStoreErrors(deps.store);
  }

  /** Every line logged during the turn, by any module, carries the conversation's id and the turn. */
  runTurn(conversation: Conversation, userText: string, options: TurnOptions = {}): Promise<TurnResult> {
    const started = Date.now();
    const { logger, hooks } = this.deps;
    const failed = (error: unknown) => {
      // A turn the store could not keep is tried again later, not answered with a failure.
      if (error instanceof StoreError) throw error;
      return failedTurn(conversation, error, logger);
    };
    const finish = (result: TurnResult, state?: TurnState): TurnResult => {
      const event = { conversation, turn: state?.turn ?? 0, status: result.status, steps: state?.step.step ?? 0, durationMs: Date.now() - started };
      notify(hooks, 'onTurnFinish', event, logger);
      return result;
    };
    return withLogFields(logger, { conversation: conversation.id }, () =>
      this.startTurn(conversation, userText, options).then(
        (state) => withLogFields(logger, { turn: state.turn }, () => this.loop(state).catch(failed).then((result) => finish(result, state))),
        (error: unknown) => finish(failed(error)),
      ),
    );
  }

  private stepFinished(state: TurnState): void {
    const { conversation, turn, continuationPages: pagesRead } = state;
    notify(this.deps.hooks, 'onStepFinish', { conversation, turn, ...state.step, pagesRead }, this.deps.logger);
  }

  private async startTurn(conversation: Conversation, userText: string, options: TurnOptions): Promise<TurnState> {
    const transcript = await this.store.loadTranscript(conversation);
    const started = options.inboxId === undefined ? undefined : transcript.find((m) => m.role === 'user' && m.inboxId === options.inboxId);
    const turn = started?.turn ?? transcript.reduce((max, m) => Math.max(max, m.turn), 0) + 1;
    const progress = turnProgress(started ? transcript : [], turn);
    const state: TurnState = {
      conversation,
      turn,
      transcript,
      tools: this.offeredTools(),
      ...progress,
      resultChars: 0,
      viewChars: this.options.budget.turnBudgetChars,
      step: { step: 0, finishReason: 'stop', level: 0, llmMs: 0, repairs: 0, toolCalls: [], previewed: 0 },
      signal: options.signal ?? new AbortController().signal,
    };
    // Committed before the model is asked, so a crash never loses what the user said.
    if (!started) await this.append(state, [{ role: 'user', content: userText, turn, ...(options.inboxId === undefined ? {} : { inboxId: options.inboxId }) }]);
    return state;
  }

  private async loop(state: TurnState): Promise<TurnResult> {
    const { logger } = this.deps;
    const { maxContinuations, maxToolIterations } = this.options;
    const reply = (status: TurnStatus, fallback: string): TurnResult => {
      const text = state.replyParts.join('');
      if (status === 'cut_off') return { reply: (text || fallback) + (text ? CUT_OFF_NOTE : ''), status };
      return { reply: text || fallback, status };
    };

    if (state.finished) return reply('ok', '');
    for (;;) {
      // Past either cap the model must answer: a model that keeps paging would otherwise loop forever.
      const capped = state.toolIterations >= maxToolIterations || state.continuationPages > this.options.maxContinuationPages;
      const toolChoice = capped ? 'none' : 'auto';
      const response = await this.complete(state, toolChoice);
      const calls = toolChoice === 'none' ? [] : acceptedCalls(response, state.tools);
      if (calls.length === 0) this.stepFinished(state);

      if (calls.length > 0) {
        state.replyParts = [];
        // The calls are stored with this message, before any runs: a crash mid-call leaves a
        // call without a result, which pairing repair answers on the next request.
        await this.append(state, [{ role: 'assistant', content: response.content, toolCalls: calls, turn: state.turn }]);
        await this.dispatch(state, calls);
        if (calls.some((c) => !flagsOf(state.tools, c.name).freeIteration)) state.toolIterations++;
        this.stepFinished(state);
        continue;
      }

      if (response.finishReason === 'length') {
        const progress = { saidSomething: state.replyParts.length > 0, budgetRaised: state.maxTokens !== undefined, continuations: state.continuations };
        const next = afterCutOff(response.content, state.turn, progress, { ...this.options, maxContinuations });
        if (next.action === 'retry') {
          logger.warn(`[continue] Cut off before any text; trying once more with ${next.maxTokens} output tokens`);
          state.maxTokens = next.maxTokens;
          continue;
        }
        if (response.content.trim()) state.replyParts.push(response.content);
        await this.append(state, next.store);
        if (next.action === 'stop' && next.why === 'nothing new') {
          logger.warn('[continue] Cut off with nothing new, stopping');
          return reply('cut_off', "The model's reply was cut off before it said anything, even with a larger output budget. Try a narrower question, or raise OPENAI_MAX_TOKENS.");
        }
        if (next.action === 'stop') {
          logger.warn('[continue] Max continuations reached, breaking');
          return reply('cut_off', '');
        }
        state.continuations++;
        logger.info(`[continue] Response truncated at max_tokens, requesting continuation (${state.continuations}/${maxContinuations})`);
        continue;
      }

      await this.append(state, response.content ? [{ role: 'assistant', content: response.content, turn: state.turn }] : []);
      if (response.content) state.replyParts.push(response.content);
      const fallback = toolChoice === 'none' ? 'I reached the tool-call limit for this message without an answer. Please narrow the question.' : 'The model returned an empty reply.';
      return reply('ok', fallback);
    }
  }

  private async complete(state: TurnState, toolChoice: 'auto' | 'none'): Promise<LlmResponse> {
    const { llm, logger } = this.deps;
    const id = state.conversation.id;
    for (const { level, viewChars } of fitAttempts(this.overflow.levelFor(id), state.viewChars, readingChars(state.transcript, state.turn))) {
      const { transformContext } = this.deps.hooks ?? {};
      const { messages, repairs } = buildRequestMessages(state.transcript, state.turn, {
        compaction: this.options.compaction,
        level,
        viewChars,
        userPreview: { ...this.options.budget, maxChars: this.options.userMessageMaxChars },
        transform: transformContext && ((ms) => transformContext(ms, { conversation: state.conversation, turn: state.turn })),
      });
      const request = { ...this.emptyRequest(state.tools, toolChoice), messages, maxTokens: state.maxTokens };
      try {
        // Some servers cut an over-long prompt without a word (Ollama): what is known not to fit is never sent.
        if (llm.fits && !(await llm.fits(request))) throw new ContextLengthError('The request is estimated to exceed OPENAI_CONTEXT_TOKENS.');
        const started = Date.now();
        const response = await llm.complete(request, state.signal);
        state.usage = response.usage;
        state.step = { step: state.step.step + 1, finishReason: response.finishReason, level, usage: response.usage, llmMs: Date.now() - started, repairs, toolCalls: [], previewed: 0 };
        // Within a turn the view only narrows, so that what was sent stays the prefix of what is sent next.
        state.viewChars = viewChars;
        this.overflow.remember(id, level);
        return response;
      } catch (error) {
        if (!(error instanceof ContextLengthError)) throw error;
        logger.warn(`[overflow] Context too long at level ${level} with ${viewChars} chars of reading in view; compacting harder`);
      }
    }
    throw new ContextLengthError('The request does not fit even with everything compacted.');
  }

  /** What every request carries besides the conversation: the system prompt and the tools' schemas. */
  emptyRequest(tools: ToolSpec[] = this.offeredTools(), toolChoice: 'auto' | 'none' = 'auto'): LlmRequest {
    return { system: this.options.systemPrompt, messages: [], tools, toolChoice };
  }

  private offeredTools(): ToolSpec[] {
    return [...this.deps.tools.list().filter((t) => t.name !== GET_CONTINUATION), getContinuationSpec];
  }

  /** Runs the calls concurrently; their results and tool messages are stored together, in one write. */
  private async dispatch(state: TurnState, calls: ToolCall[]): Promise<void> {
    const results = await Promise.all(
      calls.map(async (call) => {
        const started = Date.now();
        const outcome = admitResult(await this.execute(state, call), this.options.resultIntake);
        return { toolCallId: call.id, ...outcome, durationMs: Date.now() - started, bounded: flagsOf(state.tools, call.name).bounded };
      }),
    );
    const budgeted = applyResultBudget(results, this.options.budget, state.resultChars);
    state.resultChars += budgeted.reduce((sum, r) => sum + r.content.length, 0);
    state.step.toolCalls = calls.map((c, i) => ({ name: c.name, isError: results[i]!.isError, durationMs: results[i]!.durationMs }));
    state.step.previewed = budgeted.filter((r, i) => r.content !== results[i]!.content).length;
    const messages = budgeted.map((r): Message => ({ role: 'tool', toolCallId: r.toolCallId, content: r.content, turn: state.turn }));
    await this.append(state, messages, { results: results.map(({ bounded: _, ...r }) => r) });
  }

  private async execute(state: TurnState, call: ToolCall): Promise<ToolOutcome> {
    const parsed = parseToolArguments(call.arguments);
    if (!parsed.ok) return errorResult(`Invalid arguments for ${call.name}: ${parsed.error}. Call it again with a JSON object.`);
    const info = { conversation: state.conversation, turn: state.turn };
    const decision = (await this.deps.hooks?.beforeToolCall?.({ name: call.name, args: parsed.args }, info)) ?? { action: 'allow' };
    if (decision.action === 'deny') return errorResult(`The call to ${call.name} was not allowed: ${decision.reason}`);
    if (decision.action === 'answer') return decision.outcome;
    const own = this.ownTools.get(call.name);
    if (own) return own(state, parsed.args);
    if (!state.tools.some((t) => t.name === call.name)) {
      return errorResult(`Unknown tool "${call.name}". Available tools: ${state.tools.map((t) => t.name).join(', ')}`);
    }
    try {
      return await this.deps.tools.call(call.name, parsed.args, { conversation: state.conversation, turn: state.turn, signal: state.signal });
    } catch (error) {
      return errorResult(`Tool ${call.name} failed: ${(error as Error).message}`);
    }
  }

  /**
   * One write per step: its messages, with the usage of the model call that produced them. All
   * that is stored or sent again passes here, so here it is made well-formed (see `wellFormed`).
   */
  private async append(state: TurnState, unchecked: Message[], uncheckedRecords: StepRecords = {}): Promise<void> {
    const messages = unchecked.map(wellFormedMessage);
    const records = { ...uncheckedRecords, results: uncheckedRecords.results?.map((r) => ({ ...r, content: wellFormed(r.content) })) };
    const usage = state.usage;
    state.usage = undefined;
    await this.store.appendMessages(state.conversation, messages, usage ? { ...records, usage } : records);
    state.transcript.push(...messages);
  }
}
