import type { Conversation } from './conversation.ts';
import type { LlmUsage } from './llm.ts';
import type { SharedFile } from './files.ts';
import type { FormAnswer, FormRequest } from './parked/forms.ts';
import type { ParkedCall, StoredRead, ToolProgress } from './tools.ts';
import type { Lease } from './store.ts';

/** The turn port: what the inbound pipeline needs of the agent, one turn per user message. */

export type TurnStatus = 'ok' | 'cut_off' | 'failed';

/**
 * Why a turn was cut short and is resumed: `lease_lost`, this process lost the lane's lease;
 * `crash`, the lane was taken over from a holder that stopped renewing it (a crash, or a stall past
 * the lease); `shutdown`, a holder that stopped released it; `error`, the attempt failed (the
 * database, most often) and is tried again.
 */
export type RedoReason = 'lease_lost' | 'crash' | 'shutdown' | 'error';

/** A turn that ran to its end: the reply to post. */
export interface TurnReply {
  reply: string;
  status: TurnStatus;
  /** The turn's results the model was shown as previews, being over a budget: stored whole. */
  previewed?: PreviewedResult[];
}

/** A tool result the model read as a preview: people can read it whole. */
export interface PreviewedResult {
  toolCallId: string;
  toolName: string;
}

/**
 * The turn stopped where calls wait for a person's decision (an interruption, not an answer):
 * everything up to them is stored, and the same turn, run again once they are decided, goes on
 * from there without asking the model again.
 */
export interface AwaitingApproval {
  /** Nothing to post yet. */
  reply: '';
  status: 'awaiting_approval';
  calls: PendingCall[];
}

export type TurnResult = TurnReply | AwaitingApproval;

export interface TurnOptions {
  /**
   * The inbox row this turn answers. When its user message is already stored, the turn goes on
   * from the stored transcript (a crash or a lease takeover cut it short) instead of starting over.
   */
  inboxId?: string;
  signal?: AbortSignal;
  /**
   * The lane's lease the turn runs under: each step's write carries it, and is refused
   * (LeaseLostError, a StoreError) once another holder took the lane.
   */
  fence?: Lease;
  /** The conversation was created for this turn, under `fence`: nothing is stored in it yet. */
  created?: boolean;
  /**
   * Why this message's earlier attempt ended, if one did: a turn it left cut short counts what it
   * starts again under this reason (the agent's `onRedone`).
   */
  resumedAfter?: RedoReason;
  /**
   * The files shared with the message, read when the turn stores them: once, before the model is
   * first asked. A turn resumed past that point does not ask for them again.
   */
  files?: () => Promise<SharedFile[]>;
  /** What the channel's policy changes for this turn. */
  policy?: TurnPolicy;
  /** Puts a running tool's question to the person who started the turn. */
  askForm?(request: FormRequest): Promise<FormAnswer>;
  /** Told what the turn is doing as it goes, for a status line people read. */
  onActivity?(activity: TurnActivity): void;
  /** Who the turn's usage is counted for, at what price, and the caps on it. */
  spend?: TurnSpend;
  /** The person whose message the turn answers (their platform user id), for tools acting as them. */
  user?: string;
  /** Calls waiting for that person's sign-in; without it such a call is declined at once. */
  signIn?: SignInGate;
}

/** How a turn counts its usage, and the gate each of its model requests passes where caps apply. */
export interface TurnSpend {
  /** The person whose message the turn answers. */
  user: string;
  /** A request's price; undefined for a model without one. */
  price(usage: LlmUsage): number | undefined;
  /**
   * Before each model request: holds what it may cost against the caps, or says which cap is
   * reached (and when it resets), for the person to read. The model is the request's, where a
   * policy names one.
   */
  admit?(
    model: string | undefined,
    mostTokens: number,
  ): Promise<{ holdId: string } | { refusal: string }>;
  /** A request that failed, or whose response carried no usage, stores none: its hold goes. */
  release?(holdId: string): Promise<void>;
  /**
   * The turn ended (answered, stopped, failed or interrupted): what it reserved against the caps,
   * and any hold its requests left, go. Never fails.
   */
  end?(): Promise<void>;
}

/**
 * What a turn is doing: asking the model (`answering` once tools have run, so it may be writing
 * the answer), running a tool (`reading` for a tool that only reads stored results), or hearing
 * from a running tool.
 */
export type TurnActivity =
  | { kind: 'model'; afterTools: boolean }
  | { kind: 'tool'; name: string; reading: boolean }
  | { kind: 'progress'; name: string; progress: ToolProgress }
  /** Which part of a stored result the running call reads. */
  | { kind: 'reading'; name: string; read: StoredRead };

/** A channel's own prompt, model and tools. */
export interface TurnPolicy {
  /** In place of the system prompt. */
  systemPrompt?: string;
  /** After the system prompt. */
  systemPromptAddition?: string;
  model?: string;
  /** Whether a tool is offered here; a call to one that is not is refused. */
  offersTool?(name: string): boolean;
  /** Calls that wait for a person's decision before they run. */
  approval?: ApprovalGate;
}

/** A stored call, about to run. */
export interface PendingCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** Why it waits when not for a decision: a sign-in, or a task its server runs. */
  parked?: ParkedCall;
}

/** Approved means: run it now. Otherwise the reason is what the model reads. */
export type ApprovalAnswer = { approved: true } | { approved: false; reason: string };

export interface ApprovalGate {
  needs(toolName: string): boolean;
  /**
   * Where the call's decision stands, without waiting: `pending` until a person decides or its
   * time is up (the first look sets the deadline; past it, this look expires the call). Approved
   * at most once per call, even across a restart.
   */
  decision(call: PendingCall): Promise<ApprovalAnswer | 'pending'>;
}

/**
 * Calls that wait for the person who asked to sign in to their server as themselves (a tool source's
 * SignInRequiredError): the turn parks on them as on an approval.
 */
export interface SignInGate {
  /**
   * The call needs its person's sign-in to `server`: until when it waits (the first look sets the
   * deadline), or why it goes no further, for the model to read.
   */
  wait(
    call: PendingCall,
    signIn: { server: string; reason: string },
  ): Promise<{ until: Date } | { declined: string }>;
  /** Among these calls, those that waited for a sign-in and have not been sent since. */
  waiting(toolCallIds: string[]): Promise<Set<string>>;
  /**
   * A call that waited is about to be sent: true once, or why not (its time ran out; it was sent
   * already, and a crash came mid-call).
   */
  start(call: PendingCall): Promise<true | { declined: string }>;
}

export interface TurnRunner {
  /**
   * Resolves with the reply to post, or with the calls the turn awaits decisions on; throws only
   * when the turn could not be kept (a StoreError), to be tried again.
   */
  runTurn(conversation: Conversation, userText: string, options?: TurnOptions): Promise<TurnResult>;
}
