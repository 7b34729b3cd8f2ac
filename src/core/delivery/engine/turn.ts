import type { ApprovalPort } from '../../ports/parked/approvals.ts';
import type { Conversation } from '../../ports/conversation.ts';
import type {
  AcquiredLease,
  DeliveryPort,
  InboxEntry,
  PendingEntry,
  ReplyLink,
} from '../../ports/platform/delivery.ts';
import type { FileReader } from '../../ports/files.ts';
import type { FormRequest } from '../../ports/parked/forms.ts';
import type { Answered, Outbound } from '../../ports/platform/platform.ts';
import type { SpendLedger } from '../../ports/spend.ts';
import type {
  PendingCall,
  TurnActivity,
  TurnPolicy,
  TurnResult,
  TurnRunner,
} from '../../ports/turns.ts';
import type { ApprovalDesk } from '../waiting/approvals.ts';
import type { CutShort } from './cut-short.ts';
import { greetingOf } from '../posts/greeting.ts';
import { resultLinks } from '../posts/result-links.ts';
import { policyFor, toolAllowed, toolMatches, type Policy } from '../rules/policy.ts';
import type { QuestionDesk } from '../waiting/questions.ts';
import { NEW_CONVERSATION_REPLY, NOTHING_TO_READ_REPLY } from '../posts/replies.ts';
import { readSharedFiles, type FileLimits } from '../intake/shared-files.ts';
import { signInGate } from '../waiting/sign-in-gate.ts';
import { turnSpend } from '../rules/spend.ts';
import { statusText, waitingForAnswer, type StatusLine } from '../posts/status.ts';

export interface TurnDeps {
  agent: TurnRunner;
  ledger: Pick<DeliveryPort, 'startConversation' | 'conversationFor'>;
  files: FileReader;
  spend?: SpendLedger;
  desk: ApprovalDesk;
  questions: QuestionDesk;
  cutShort: CutShort;
  /** Where calls waiting for a person's sign-in keep their wait. */
  approvals: ApprovalPort;
}

export interface TurnOptions {
  files: FileLimits;
  policy?: Policy;
  /** How long a person has to answer a tool's question, or to sign in for a call. */
  questionTimeoutMs: number;
  /** A stored result's page, where people read it whole; no links to results without. */
  resultPage?(toolCallId: string): string;
}

/**
 * What a message's turn gives: its reply, with links to the results it previewed, or the calls it
 * stopped at to await approval.
 */
export type TurnReply =
  { text: string; outcome: Answered; links?: ReplyLink[] } | { awaiting: PendingCall[] };

/**
 * The reply to one message: a new conversation started, a word for a message with nothing to read,
 * or its turn, run (or resumed) in the conversation, under the channel's policy, with its files.
 */
export async function replyTo(
  deps: TurnDeps,
  options: TurnOptions,
  entry: PendingEntry,
  outbound: Outbound,
  run: { signal: AbortSignal; lease: AcquiredLease; status?: StatusLine },
): Promise<TurnReply> {
  const { signal, lease, status } = run;
  if (entry.kind === 'greeting') return { text: greetingOf(options.policy, entry), outcome: 'ok' };
  if (entry.kind === 'new_conversation') {
    await deps.ledger.startConversation(entry);
    return { text: NEW_CONVERSATION_REPLY, outcome: 'ok' };
  }
  if (!entry.text.trim() && !entry.files?.length)
    return { text: NOTHING_TO_READ_REPLY, outcome: 'ok' };
  const { conversation, fresh, created } = await conversationOf(deps.ledger, entry);
  if (fresh) await outbound.titleThread?.(entry);
  const text = (fresh && (await outbound.threadContext?.(entry))) || entry.text;
  const notes: string[] = [];
  const files = entry.files?.length
    ? async () => {
        const read = await readSharedFiles(entry, outbound, deps.files, options.files, signal);
        notes.push(...read.notes);
        return read.files;
      }
    : undefined;
  const turn = {
    inboxId: entry.id,
    signal,
    fence: { laneId: lease.laneId, generation: lease.generation },
    created,
    resumedAfter: deps.cutShort.resumedAfter(entry, lease),
    files,
    policy: turnPolicy(deps.desk, options.policy, entry, outbound),
    askForm: (request: FormRequest) => {
      status?.set(waitingForAnswer(request.from));
      return deps.questions.ask(entry, outbound, request, signal);
    },
    onActivity: status && ((activity: TurnActivity) => status.set(statusText(activity))),
    spend: turnSpend({ ...entry.lane, user: entry.user }, options.policy ?? {}, deps.spend),
    user: entry.user,
    signIn: signInGate(deps.approvals, entry, options.questionTimeoutMs),
  };
  let result = await deps.agent.runTurn(conversation, text, turn);
  // Where the person is at hand (the console), they are asked now and the turn goes on at once.
  // Calls that parked (a task) wait with the message, as anywhere.
  const asked = (r: TurnResult) =>
    r.status === 'awaiting_approval' ? r.calls.filter((call) => !call.parked) : [];
  while (outbound.askApproval && asked(result).length > 0) {
    await deps.desk.ask(entry, { askApproval: outbound.askApproval }, asked(result));
    // The conversation holds the turn's steps now.
    result = await deps.agent.runTurn(conversation, text, { ...turn, created: false });
  }
  // A turn cut short by shutdown is resumed later, not answered with its cancellation.
  signal.throwIfAborted();
  if (result.status === 'awaiting_approval') return { awaiting: result.calls };
  return answerOf(result, notes, options.resultPage);
}

/** A turn's answer: its reply, the notes on its files, and links to the results it previewed. */
function answerOf(
  result: Exclude<TurnResult, { status: 'awaiting_approval' }>,
  notes: string[],
  resultPage: TurnOptions['resultPage'],
): TurnReply {
  const { previewed = [] } = result;
  return {
    text: [result.reply, ...notes.map((note) => `_(${note})_`)].join('\n\n'),
    outcome: result.status === 'failed' ? 'failed' : 'ok',
    ...(resultPage && previewed.length > 0 ? { links: resultLinks(previewed, resultPage) } : {}),
  };
}

/**
 * The lane's conversation: as the message was handed out with it (`fresh` where it was linked
 * then, the thread's first turn), or found and linked now.
 */
async function conversationOf(
  ledger: TurnDeps['ledger'],
  entry: PendingEntry,
): Promise<{ conversation: Conversation; fresh: boolean; created: boolean }> {
  if (!entry.conversation) return ledger.conversationFor(entry);
  const { conversation, linked } = entry;
  return { conversation, fresh: linked !== undefined, created: linked?.created ?? false };
}

/** The channel's own prompt, model, tools and approvals, as the turn takes them. */
function turnPolicy(
  desk: ApprovalDesk,
  policy: Policy | undefined,
  entry: InboxEntry,
  outbound: Outbound,
): TurnPolicy {
  const { systemPrompt, systemPromptAddition, model, tools, approve } = policyFor(
    policy,
    entry.lane,
  );
  return {
    systemPrompt,
    systemPromptAddition,
    model,
    ...(tools ? { offersTool: (name: string) => toolAllowed(tools, name) } : {}),
    ...(approve
      ? { approval: desk.gate(entry, outbound, (name) => toolMatches(approve, name)) }
      : {}),
  };
}
