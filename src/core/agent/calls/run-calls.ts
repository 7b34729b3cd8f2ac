import { flagsOf } from './accepted-calls.ts';
import { parseToolArguments } from './arguments.ts';
import { AWAITING, executeCall } from './execute.ts';
import type { AgentHooks } from '../hooks.ts';
import { cutShortResult } from '../resume/resume.ts';
import {
  applyResultBudget,
  roomForResults,
  surelyFits,
  type ResultBudget,
} from '../results/budget.ts';
import { admitResult, type ResultIntake } from '../results/result-intake.ts';
import type { Turn } from '../turn.ts';
import type { StepRun, TurnState } from '../turn-state.ts';
import type { Logger } from '../../logger.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { LlmPort, LlmRequest } from '../../ports/llm.ts';
import type { StepRecords, StorePort } from '../../ports/store.ts';
import { isParked, type ToolOutcome, type ToolPort } from '../../ports/tools.ts';
import type { PendingCall } from '../../ports/turns.ts';

/** What running a step's calls needs besides the turn: the budgets, and the step's one write. */
export interface RunCallsOptions {
  budget: ResultBudget;
  resultIntake: ResultIntake;
  append: (messages: Message[], records: StepRecords) => Promise<void>;
}

/** A result's images go to a model that takes image input, in this turn, as shared images do. */
export function showImages(turn: Turn, toolCallId: string, outcome: ToolOutcome): void {
  const images = (outcome.binaries ?? []).flatMap((b) =>
    b.kind === 'image' && b.mimeType && b.base64
      ? [{ mimeType: b.mimeType, base64: b.base64 }]
      : [],
  );
  if (images.length) turn.images.set(toolCallId, images);
}

/** A stored call's arguments as an object (a call reaches the gate only once they parse). */
const parseArgs = (call: ToolCall): Record<string, unknown> => {
  const parsed = parseToolArguments(call.arguments);
  return parsed.ok ? parsed.args : {};
};

const toolMessage = (r: { toolCallId: string }, content: string, turn: number): Message => ({
  role: 'tool',
  toolCallId: r.toolCallId,
  content,
  turn,
});

/** The newest message that made calls: the step's. */
function newestCalls(transcript: readonly Message[]) {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role === 'assistant' && m.toolCalls?.length) return m;
  }
  return undefined;
}

/**
 * Chars of the step's results the next request can take beside the request that made their calls
 * (see `roomForResults`), measured with the model client's estimate; Infinity when the window is
 * not known, or when they surely fit.
 */
async function windowRoom(
  llm: LlmPort,
  turn: Turn,
  results: ReadonlyArray<{ toolCallId: string; content: string; bounded?: boolean }>,
): Promise<number> {
  const { transcript } = turn;
  const room = llm.room?.bind(llm);
  const roomTokens = await turn.room?.();
  if (roomTokens === undefined || !room) return Infinity;
  const calls = newestCalls(transcript);
  const textChars = results.reduce((n, r) => n + r.content.length, 0);
  const callsChars = calls
    ? calls.content.length + JSON.stringify(calls.toolCalls ?? []).length
    : 0;
  if (surelyFits(textChars + callsChars, results.length + 1, roomTokens)) return Infinity;
  const bare: LlmRequest = { system: '', messages: [], tools: [], toolChoice: 'none' };
  const none = (await room(bare)) ?? 0;
  const tokens = async (messages: Message[]) =>
    messages.length === 0 ? 0 : none - ((await room({ ...bare, messages })) ?? 0);
  const [callsTokens, overheadTokens, allTokens] = await Promise.all([
    tokens(calls ? [calls] : []),
    tokens(results.map((r) => toolMessage(r, '', turn.number))),
    tokens(results.map((r) => toolMessage(r, r.content, turn.number))),
  ]);
  return roomForResults({
    roomTokens,
    callsTokens,
    overheadTokens,
    textTokens: allTokens - overheadTokens,
    textChars,
  });
}

/**
 * Runs the calls concurrently; their results and tool messages are stored together, in one
 * write. A call awaiting a decision is not run, and one that parks has not ended: neither gets a
 * result yet.
 */
export async function runCalls(
  deps: { tools: ToolPort; llm: LlmPort; store: StorePort; hooks?: AgentHooks; logger: Logger },
  turn: Turn,
  state: TurnState,
  calls: ToolCall[],
  options: RunCallsOptions,
): Promise<StepRun> {
  const waiting: Array<PendingCall | undefined> = [];
  const ran = await Promise.all(
    calls.map(async (call, i) => {
      const started = Date.now();
      const done = await executeCall(deps, turn, state.fit.viewChars, call);
      if (done === AWAITING || isParked(done)) {
        const pending = { id: call.id, name: call.name, args: parseArgs(call) };
        waiting[i] = done === AWAITING ? pending : { ...pending, parked: done };
        return undefined;
      }
      const outcome = cutShortResult(done, call.name, turn.tools);
      showImages(turn, call.id, outcome);
      return {
        toolCallId: call.id,
        ...admitResult(outcome, options.resultIntake),
        durationMs: Date.now() - started,
        name: call.name,
        bounded: flagsOf(turn.tools, call.name).bounded,
      };
    }),
  );
  const results = ran.filter((r) => r !== undefined);
  const awaiting = waiting.filter((w) => w !== undefined);
  const room = await windowRoom(deps.llm, turn, results);
  const budgeted = applyResultBudget(results, options.budget, state.resultChars, room);
  const messages = budgeted.map((r) => toolMessage(r, r.content, turn.number));
  if (messages.length > 0)
    await options.append(messages, {
      results: results.map(({ bounded: _, name: __, ...r }) => r),
    });
  return {
    toolCalls: results.map((r) => ({
      name: r.name,
      isError: r.isError,
      durationMs: r.durationMs,
    })),
    awaiting,
    previewed: budgeted.filter((r, i) => r.content !== results[i]!.content).length,
    resultChars: budgeted.reduce((sum, r) => sum + r.content.length, 0),
  };
}
