import { flagsOf } from './accepted-calls.ts';
import { parseToolArguments } from './arguments.ts';
import { callLimitRefusal } from './call-limits.ts';
import { notify, type AgentHooks } from '../hooks.ts';
import { turnSampler } from './sampling.ts';
import type { Turn } from '../turn.ts';
import { errorMessage, SignInRequiredError } from '../../errors.ts';
import type { ToolCall } from '../../ports/conversation.ts';
import { StoreError } from '../../ports/store.ts';
import {
  errorResult,
  type ParkedCall,
  type ToolOutcome,
  type ToolPort,
} from '../../ports/tools.ts';
import type { Logger } from '../../logger.ts';
import type { LlmPort } from '../../ports/llm.ts';
import type { StorePort } from '../../ports/store.ts';
import type { PendingCall } from '../../ports/turns.ts';

/** What `executeCall` says of a call that waits for a person's decision: it did not run. */
export const AWAITING = Symbol('awaiting approval');

/**
 * One call of a step, from its arguments to its outcome: the hooks' word, the policy's limits, an
 * approval it waits for, the tool itself; or the call parks (a sign-in, a task).
 */
export async function executeCall(
  deps: { tools: ToolPort; hooks?: AgentHooks; logger: Logger; llm: LlmPort; store: StorePort },
  turn: Turn,
  viewChars: number,
  call: ToolCall,
): Promise<ToolOutcome | ParkedCall | typeof AWAITING> {
  const ready = turn.ready.get(call.id);
  if (ready) return ready;
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok)
    return errorResult(
      `Invalid arguments for ${call.name}: ${parsed.error}. Call it again with a JSON object.`,
    );
  const pending = { id: call.id, name: call.name, args: parsed.args };
  const held = await beforeRun(deps.hooks, turn, pending, call);
  if (held) return held;
  const info = { conversation: turn.conversation, turn: turn.number };
  turn.onActivity?.({
    kind: 'tool',
    name: call.name,
    reading: flagsOf(turn.tools, call.name).derived ?? false,
  });
  try {
    const reading = {
      transcript: turn.transcript,
      viewChars,
      roomTokens: await turn.room?.(),
    };
    return await deps.tools.call(call.name, parsed.args, {
      ...info,
      callId: call.id,
      signal: turn.signal,
      reading,
      offers: turn.offers,
      ...(turn.askForm ? { askForm: turn.askForm } : {}),
      askModel: turnSampler(deps, turn),
      ...(turn.user ? { user: turn.user } : {}),
      onReading: (read) => turn.onActivity?.({ kind: 'reading', name: call.name, read }),
      onProgress: (progress) => {
        turn.onActivity?.({ kind: 'progress', name: call.name, progress });
        notify(
          deps.hooks,
          'onToolProgress',
          { ...info, toolCallId: call.id, name: call.name, progress },
          deps.logger,
        );
      },
    });
  } catch (error) {
    // The store failing is not the tool's failure: the turn is tried again later.
    if (error instanceof StoreError) throw error;
    if (error instanceof SignInRequiredError) return signInWait(turn, pending, error);
    return errorResult(`Tool ${call.name} failed: ${errorMessage(error)}`);
  }
}

/**
 * What stops a call before it runs: the hooks, a tool not offered, the turn's limits, a decision
 * it waits for, a sign-in whose time ran out. Undefined: it runs.
 */
async function beforeRun(
  hooks: AgentHooks | undefined,
  turn: Turn,
  pending: PendingCall,
  call: ToolCall,
): Promise<ToolOutcome | typeof AWAITING | undefined> {
  const info = { conversation: turn.conversation, turn: turn.number };
  const decision = (await hooks?.beforeToolCall?.(
    { name: call.name, args: pending.args },
    info,
  )) ?? {
    action: 'allow',
  };
  if (decision.action === 'deny')
    return errorResult(`The call to ${call.name} was not allowed: ${decision.reason}`);
  if (decision.action === 'answer') return decision.outcome;
  if (!turn.tools.some((t) => t.name === call.name))
    return errorResult(
      `Unknown tool "${call.name}". Available tools: ${turn.tools.map((t) => t.name).join(', ')}`,
    );
  const refusal = callLimitRefusal(turn.tools, turn.transcript, turn.number, call);
  if (refusal) return errorResult(refusal);
  if (turn.approval?.needs(call.name)) {
    const answer = await turn.approval.decision(pending);
    if (answer === 'pending') return AWAITING;
    if (!answer.approved) return errorResult(answer.reason);
  }
  if (turn.signInWaits.has(call.id) && turn.signIn) {
    const start = await turn.signIn.start(pending);
    if (start !== true) return errorResult(start.declined);
  }
  return undefined;
}

/**
 * The call needs its person to sign in: it parks until they do or their time is up. Where nobody
 * can be asked, the model reads why; the link itself never reaches it.
 */
async function signInWait(
  turn: Turn,
  call: PendingCall,
  { server, url, reason }: SignInRequiredError,
): Promise<ToolOutcome | ParkedCall> {
  if (!turn.signIn)
    return errorResult(
      `${call.name} needs the person who asked to sign in to ${server} as themselves, and they cannot be asked here.`,
    );
  const wait = await turn.signIn.wait(call, { server, reason });
  if ('declined' in wait) return errorResult(wait.declined);
  return { parked: 'sign_in', until: wait.until, signIn: { server, url, reason } };
}
