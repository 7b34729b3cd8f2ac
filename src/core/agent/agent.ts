import { acceptedCalls, newToolCallId } from './calls/accepted-calls.ts';
import { derivedCallCount, pastCallLimit } from './calls/call-limits.ts';
import type { UserPreview } from './context/long-messages.ts';
import type { MicrocompactOptions } from './context/microcompact.ts';
import { readingChars } from './context/reading-view.ts';
import { buildRequestMessages } from './context/request.ts';
import { notify, type AgentHooks } from './hooks.ts';
import { nextStep, type StepLimits } from './next-step.ts';
import { OverflowMemory } from './context/overflow-memory.ts';
import type { ResultBudget } from './results/budget.ts';
import type { ResultIntake } from './results/result-intake.ts';
import { previewedResults } from './results/preview.ts';
import { offeredTools, type ToolOfferOptions } from './calls/tool-offer.ts';
import { resumePlan, turnProgress, unansweredCalls } from './resume/resume.ts';
import { redoneWork } from './resume/redone.ts';
import type { ModelOutcome, Step } from './step.ts';
import { cappedReply, failedTurn } from './turn-replies.ts';
import { admit, settleUsage, usageRecord } from './request-spend.ts';
import { whileUnreachable } from './resume/unreachable.ts';
import { runCalls, showImages } from './calls/run-calls.ts';
import type { Turn } from './turn.ts';
import {
  advance,
  startState,
  stepEvent,
  type ModelCall,
  type StepRun,
  type TurnState,
} from './turn-state.ts';
import { withLogFields, type Logger } from '../logger.ts';
import type { Conversation, Message, ToolCall } from '../ports/conversation.ts';
import { ContextLengthError, type LlmPort, type LlmRequest } from '../ports/llm.ts';
import {
  StoreError,
  typedStoreErrors,
  type StepRecords,
  type StorePort,
  type UsageRecord,
} from '../ports/store.ts';
import type { SharedFile } from '../ports/files.ts';
import type { ToolPort, ToolSpec } from '../ports/tools.ts';
import type { PendingCall, TurnOptions, TurnResult, TurnRunner } from '../ports/turns.ts';
import { wellFormed, wellFormedMessage } from '../well-formed.ts';

export interface AgentOptions extends StepLimits {
  systemPrompt: string;
  budget: ResultBudget;
  compaction: MicrocompactOptions;
  /** A longer user message is stored whole and shown to the model as a pageable preview. */
  userPreview: UserPreview;
  maxToolIterations: number;
  /**
   * What a tool's output goes through before anything reads it: the store's cap, secret masking.
   */
  resultIntake: ResultIntake;
  /** When a request carries a catalogue of the server tools instead of their schemas. */
  toolOffer?: ToolOfferOptions;
}

export interface AgentDeps {
  llm: LlmPort;
  tools: ToolPort;
  store: StorePort;
  logger: Logger;
  hooks?: AgentHooks;
}

/**
 * The prompt, then what each offered tool says of its own use: a tool not offered is not mentioned.
 */
const systemPrompt = (base: string, tools: ToolSpec[]) =>
  [base, ...tools.flatMap((t) => (t.guidance ? [t.guidance] : []))].join('\n');

/**
 * What the window can still take beside `request`, counted once, when the step's calls first ask
 * (the count may load the model's tokenizer: a reply with no calls never needs it).
 */
function roomOf(llm: LlmPort, request: LlmRequest): Turn['room'] {
  const room = llm.room?.bind(llm);
  if (!room) return undefined;
  let counted: Promise<number | undefined> | undefined;
  return () => (counted ??= room(request));
}

/**
 * The call Spool makes for each file shared with a message, so that the file is a result of its
 * turn.
 */
const SHARED_FILE = 'shared_file';

/** A reply with the turn's results the model read as previews, for people to read whole. */
function withPreviewed(result: TurnResult, turn: Turn): TurnResult {
  if (result.status === 'awaiting_approval') return result;
  const previewed = previewedResults(turn.transcript, turn.number);
  return previewed.length > 0 ? { ...result, previewed } : result;
}

/**
 * The channel-agnostic agent: one `runTurn` per user message. Each step asks the model, lets
 * `nextStep` decide what its reply means, acts on that decision and lets `advance` count it. The
 * loop reads tools' flags, never their names.
 */
export class Agent implements TurnRunner {
  private readonly overflow = new OverflowMemory();
  private readonly store: StorePort;

  constructor(
    private readonly deps: AgentDeps,
    private readonly options: AgentOptions,
  ) {
    this.store = typedStoreErrors(deps.store);
  }

  /**
   * Every line logged during the turn, by any module, carries the conversation's id and the turn.
   */
  runTurn(
    conversation: Conversation,
    userText: string,
    options: TurnOptions = {},
  ): Promise<TurnResult> {
    const started = Date.now();
    const { logger, hooks } = this.deps;
    const failed = (error: unknown) => {
      // A turn the store could not keep is tried again later, not answered with a failure.
      if (error instanceof StoreError) throw error;
      return failedTurn(conversation, error, logger);
    };
    const finish = (result: TurnResult, turn = 0, steps = 0): TurnResult => {
      notify(
        hooks,
        'onTurnFinish',
        { conversation, turn, status: result.status, steps, durationMs: Date.now() - started },
        logger,
      );
      return result;
    };
    return withLogFields(logger, { conversation: conversation.id }, () =>
      this.startTurn(conversation, userText, options)
        .then(
          ({ turn, state, awaiting }) =>
            withLogFields(logger, { turn: turn.number }, () =>
              this.run(turn, state, awaiting).then(
                ({ result, steps }) => finish(withPreviewed(result, turn), turn.number, steps),
                (error: unknown) => finish(failed(error), turn.number),
              ),
            ),
          (error: unknown) => finish(failed(error)),
        )
        // What the turn held against the spend caps ends with it, however it ended.
        .finally(() => options.spend?.end?.()),
    );
  }

  /**
   * What every request carries besides the conversation: the system prompt and the tools' schemas.
   */
  emptyRequest(
    all: ToolSpec[] = this.deps.tools.list(),
    toolChoice: 'auto' | 'none' = 'auto',
  ): LlmRequest {
    // What a conversation's first request carries: past the schema threshold, the catalogue.
    const tools = offeredTools(all, [], this.options.toolOffer);
    return {
      system: systemPrompt(this.options.systemPrompt, tools),
      messages: [],
      tools,
      toolChoice,
    };
  }

  private async startTurn(
    conversation: Conversation,
    userText: string,
    options: TurnOptions,
  ): Promise<{ turn: Turn; state: TurnState; awaiting?: PendingCall[] }> {
    const { fence, created } = options;
    const transcript = await this.store.loadTranscript(conversation, fence && { fence, created });
    const started =
      options.inboxId === undefined
        ? undefined
        : transcript.find((m) => m.role === 'user' && m.inboxId === options.inboxId);
    const number = started?.turn ?? transcript.reduce((max, m) => Math.max(max, m.turn), 0) + 1;
    const { policy = {} } = options;
    const offers = (name: string) => policy.offersTool?.(name) ?? true;
    const tools = this.deps.tools.list().filter((t) => offers(t.name));
    const system = [
      systemPrompt(policy.systemPrompt ?? this.options.systemPrompt, tools),
      policy.systemPromptAddition,
    ]
      .filter(Boolean)
      .join('\n\n');
    const turn: Turn = {
      conversation,
      number,
      transcript,
      tools,
      offers,
      system,
      model: policy.model,
      signal: options.signal ?? new AbortController().signal,
      ready: new Map(),
      images: new Map(),
      approval: policy.approval,
      askForm: options.askForm,
      user: options.user,
      signIn: options.signIn,
      resumable: new Set(),
      signInWaits: new Set(),
      onActivity: options.onActivity,
      spend: options.spend,
      fence: options.fence,
    };
    const fit = {
      level: this.overflow.levelFor(conversation.id),
      viewChars: this.options.budget.turnBudgetChars,
    };
    const state = startState(turnProgress(started ? transcript : [], number, turn.tools), fit);
    if (!started)
      await this.takeMessage(turn, options.files !== undefined, {
        role: 'user',
        content: userText,
        turn: number,
        ...(options.inboxId === undefined ? {} : { inboxId: options.inboxId }),
      });
    const asked = transcript.some((m) => m.turn === number && m.role !== 'user');
    if (started) await this.takeUpWaits(turn);
    // A turn not yet past its shared files was reading them: nothing of the model's is redone. One
    // whose attempt was cut short before its first step was stored may have asked the model (a
    // shutdown's, or a failure's, stores the message as it ends; a first attempt reads as one
    // after a shutdown).
    const redoes = started
      ? asked || !options.files
      : !options.files && options.resumedAfter !== 'shutdown';
    if (redoes && options.resumedAfter) this.reportRedone(turn, options.resumedAfter);
    if (options.files && !asked)
      return { turn, state: await this.shareFiles(turn, state, await options.files()) };
    return started ? { turn, ...(await this.resumeCalls(turn, state)) } : { turn, state };
  }

  /**
   * A new turn's message from the person. The inbox holds it until a step stores it: stored with
   * the turn's first step, the turn makes one write fewer. A turn that shares files stores it
   * first: reading them may fail before any step.
   */
  private async takeMessage(turn: Turn, sharesFiles: boolean, message: Message): Promise<void> {
    if (sharesFiles) return this.append(turn, [message]);
    turn.unwritten = wellFormedMessage(message);
    turn.transcript.push(turn.unwritten);
  }

  /**
   * A turn cut short goes on with the calls its last stored round left unanswered, without asking
   * the model again. Calls awaiting approval go on with their decisions: were they left to pairing's
   * repair, the model would ask again and the decision on the first prompt would be lost. Any other
   * was stored before it was sent, so it may have run: a call of a read-only or idempotent tool is
   * sent again, and the rest are answered as interrupted and never sent twice (`resumePlan`).
   */
  private async resumeCalls(
    turn: Turn,
    state: TurnState,
  ): Promise<{ state: TurnState; awaiting?: PendingCall[] }> {
    const { approval } = turn;
    const calls = unansweredCalls(turn.transcript, turn.number);
    if (calls.length === 0) return { state };
    const { answered } = resumePlan(
      calls.filter((c) => !approval?.needs(c.name) && !turn.resumable.has(c.id)),
      turn.tools,
    );
    answered.forEach((outcome, id) => turn.ready.set(id, outcome));
    const step: Step = { action: 'resume_calls', calls };
    const run = await this.act(turn, state, step, undefined);
    return { state: advance(state, step, run), awaiting: run?.awaiting };
  }

  /**
   * The turn's unanswered calls taken up again where they stand (see `Turn.resumable`): tasks the
   * tools follow, and calls that waited for a sign-in (not those that wait for an approval: the
   * approval gate takes those up).
   */
  private async takeUpWaits(turn: Turn): Promise<void> {
    const unanswered = unansweredCalls(turn.transcript, turn.number)
      .filter((c) => !turn.approval?.needs(c.name))
      .map((c) => c.id);
    if (unanswered.length === 0) return;
    const [tasks, signIns] = await Promise.all([
      this.deps.tools.resumable?.(unanswered),
      turn.signIn?.waiting(unanswered),
    ]);
    turn.signInWaits = signIns ?? new Set();
    turn.resumable = new Set([...(tasks ?? []), ...turn.signInWaits]);
  }

  /** Tells the hooks what resuming `turn` starts again, if anything. */
  private reportRedone(turn: Turn, reason: NonNullable<TurnOptions['resumedAfter']>): void {
    const needs = (call: ToolCall) =>
      (turn.approval?.needs(call.name) ?? false) || turn.resumable.has(call.id);
    const redone = redoneWork(turn.transcript, turn.number, turn.tools, needs);
    if (redone.modelRequests + redone.toolCalls === 0) return;
    const event = { conversation: turn.conversation, turn: turn.number, reason, ...redone };
    notify(this.deps.hooks, 'onRedone', event, this.deps.logger);
  }

  private async shareFiles(turn: Turn, state: TurnState, files: SharedFile[]): Promise<TurnState> {
    if (files.length === 0) return state;
    const calls = files.map(({ name, mimeType, sizeBytes }) => ({
      id: newToolCallId(),
      name: SHARED_FILE,
      arguments: JSON.stringify({ name, type: mimeType ?? 'unknown', bytes: sizeBytes }),
    }));
    calls.forEach((call, i) => {
      const { outcome } = files[i]!;
      turn.ready.set(call.id, outcome);
      showImages(turn, call.id, outcome);
    });
    const step: Step = {
      action: 'share_files',
      calls,
      store: [{ role: 'assistant', content: '', toolCalls: calls, turn: turn.number }],
    };
    return advance(state, step, await this.act(turn, state, step, undefined));
  }

  /**
   * The turn's loop, and the person's message stored however it ended, where no step stored it (a
   * refusal, a failed or stopped first request): it is kept, as a stored turn's is. Not where the
   * store failed: the turn is tried again, and its message with it.
   */
  private async run(
    turn: Turn,
    state: TurnState,
    awaiting: PendingCall[] | undefined,
  ): Promise<{ result: TurnResult; steps: number }> {
    try {
      const ended = await this.loop(turn, state, awaiting);
      if (turn.unwritten) await this.append(turn, []);
      return ended;
    } catch (error) {
      if (turn.unwritten && !(error instanceof StoreError)) await this.append(turn, []);
      throw error;
    }
  }

  private async loop(
    turn: Turn,
    state: TurnState,
    awaiting: PendingCall[] = [],
  ): Promise<{ result: TurnResult; steps: number }> {
    if (awaiting.length > 0)
      return { result: { reply: '', status: 'awaiting_approval', calls: awaiting }, steps: 0 };
    if (state.finished)
      return { result: { reply: state.replyParts.join(''), status: 'ok' }, steps: 0 };
    for (;;) {
      turn.tools = this.deps.tools.list().filter((t) => turn.offers(t.name));
      // Past a cap the model must answer: a model that keeps calling would otherwise loop forever.
      const mustAnswer =
        state.toolIterations >= this.options.maxToolIterations ||
        pastCallLimit(turn.tools, turn.transcript, turn.number);
      const call = await this.ask(turn, state, mustAnswer ? 'none' : 'auto');
      if (call && 'refusal' in call)
        return {
          result: cappedReply(call.refusal, state.replyParts.join(''), state.steps),
          steps: state.steps,
        };
      const step = nextStep(
        call?.outcome ?? {
          kind: 'too_long',
          readChars: readingChars(turn.transcript, turn.number),
        },
        state,
        turn,
        this.options,
      );
      const run = await this.act(
        turn,
        state,
        step,
        call && usageRecord(turn.spend, call.outcome.response, call.holdId),
      );
      state = advance(state, step, run);
      const info = { conversation: turn.conversation, turn: turn.number };
      if (call)
        notify(
          this.deps.hooks,
          'onStepFinish',
          stepEvent(info, state, step, call, derivedCallCount(turn.transcript, turn.number), run),
          this.deps.logger,
        );
      if (step.action === 'answer' || step.action === 'stop')
        return { result: step.reply, steps: state.steps };
      // An interruption, not an error: what ran is stored, and the turn goes on once they are
      // decided.
      if (run?.awaiting.length)
        return {
          result: { reply: '', status: 'awaiting_approval', calls: run.awaiting },
          steps: state.steps,
        };
    }
  }

  /** One request, fitted as the state says; undefined when it does not fit the model's window. */
  private async ask(
    turn: Turn,
    state: TurnState,
    toolChoice: 'auto' | 'none',
  ): Promise<ModelCall | { refusal: string } | undefined> {
    const { llm, logger } = this.deps;
    const { level, viewChars } = state.fit;
    const { transformContext } = this.deps.hooks ?? {};
    const { messages, repairs } = buildRequestMessages(turn.transcript, turn.number, {
      compaction: this.options.compaction,
      level,
      viewChars,
      userPreview: this.options.userPreview,
      transform:
        transformContext &&
        ((ms) => transformContext(ms, { conversation: turn.conversation, turn: turn.number })),
    });
    const request: LlmRequest = {
      system: turn.system,
      messages,
      tools: offeredTools(turn.tools, turn.transcript, this.options.toolOffer),
      toolChoice,
      maxTokens: state.maxTokens,
      ...(turn.model ? { model: turn.model } : {}),
      ...(turn.images.size ? { images: turn.images } : {}),
    };
    try {
      // Some servers cut an over-long prompt without a word (Ollama): what is known not to fit is
      // never sent.
      if (llm.fits && !(await llm.fits(request)))
        throw new ContextLengthError('The request is estimated to exceed OPENAI_CONTEXT_TOKENS.');
      turn.room = roomOf(llm, request);
      const admitted = await admit(turn.spend, request, llm);
      if (admitted && 'refusal' in admitted) return admitted;
      const started = Date.now();
      turn.onActivity?.({ kind: 'model', afterTools: state.toolIterations > 0 });
      const response = await llm.complete(request, turn.signal).catch((error: unknown) => {
        if (admitted) void turn.spend?.release?.(admitted.holdId).catch(() => {});
        throw error;
      });
      await settleUsage(response, admitted?.holdId, turn.spend, logger);
      this.overflow.remember(turn.conversation.id, level);
      const calls = toolChoice === 'none' ? [] : acceptedCalls(response, turn.tools);
      const outcome: ModelOutcome & { kind: 'response' } = {
        kind: 'response',
        response,
        calls,
        toolChoice,
      };
      return { outcome, llmMs: Date.now() - started, repairs, holdId: admitted?.holdId };
    } catch (error) {
      if (!(error instanceof ContextLengthError)) throw error;
      logger.warn(
        `[overflow] Context too long at level ${level} with ${viewChars} chars of reading in view; compacting harder`,
      );
      return undefined;
    }
  }

  /**
   * Does what the step says. What it stores is written first, with the usage of the model call that
   * led to it.
   */
  private async act(
    turn: Turn,
    state: TurnState,
    step: Step,
    usage: UsageRecord | undefined,
  ): Promise<StepRun | undefined> {
    const store = 'store' in step ? step.store : [];
    if (store.length > 0 || usage) await this.append(turn, store, { usage });
    return 'calls' in step
      ? runCalls(this.deps, turn, state, step.calls, {
          budget: this.options.budget,
          resultIntake: this.options.resultIntake,
          append: (messages, records) => this.append(turn, messages, records),
        })
      : undefined;
  }

  /**
   * One write per step: its messages, with what else the step produced. All that is stored or
   * sent again passes here, so here it is made well-formed (see `wellFormed`).
   */
  private async append(turn: Turn, unchecked: Message[], records: StepRecords = {}): Promise<void> {
    const messages = unchecked.map(wellFormedMessage);
    const results = records.results?.map((r) => ({ ...r, content: wellFormed(r.content) }));
    const step = {
      ...records,
      ...(results && { results }),
      ...(turn.fence && { fence: turn.fence }),
    };
    const { unwritten } = turn;
    const stored = unwritten ? [unwritten, ...messages] : messages;
    const write = () => this.store.appendMessages(turn.conversation, stored, step);
    await whileUnreachable(write, turn.signal);
    turn.unwritten = undefined;
    turn.transcript.push(...messages);
  }
}
