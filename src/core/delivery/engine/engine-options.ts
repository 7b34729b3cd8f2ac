import type { ConversationKey } from '../../ports/conversation.ts';
import type { SignInPort } from '../../ports/parked/sign-ins.ts';
import type { Answered } from '../../ports/platform/platform.ts';
import type { DeliveryPort } from '../../ports/platform/delivery.ts';
import type { FeedbackPort } from '../../ports/feedback.ts';
import type { FileReader } from '../../ports/files.ts';
import type { QuestionPort } from '../../ports/parked/forms.ts';
import type { HistorySearchPort } from '../../ports/history.ts';
import type { ApprovalPort } from '../../ports/parked/approvals.ts';
import type { PromptPort } from '../../ports/prompts.ts';
import type { SchedulePort } from '../../ports/schedules.ts';
import type { SpendLedger } from '../../ports/spend.ts';
import type { TurnRunner } from '../../ports/turns.ts';
import type { Logger } from '../../logger.ts';
import type { LaneOptions } from './lanes.ts';
import type { FileLimits } from '../intake/shared-files.ts';
import type { Policy } from '../rules/policy.ts';

export interface DeliveryOptions extends LaneOptions {
  /**
   * Tries at answering one message, when the database or the platform fails, before a failure
   * reply.
   */
  maxAttempts: number;
  /** What of the files shared with a message is read. */
  files: FileLimits;
  /** A longer reply is posted as a file, where the platform posts files. */
  replyFileChars: number;
  /**
   * Per-channel rules over the defaults (the platform's allow-lists, the agent's prompt, model and
   * tools).
   */
  policy?: Policy;
  /** Where the platform does not say a person's time zone: what their schedules are read in. */
  scheduleTimeZone?: string;
  /** The scheduler's clock (tests move it on); the system's without. */
  now?: () => Date;
  /** A call that needs approval and is not decided within this long is denied. */
  approvalTimeoutMs: number;
  /** A tool's question not answered within this long is declined. */
  questionTimeoutMs: number;
  /**
   * Where a platform drops a status by itself (Slack, after two minutes), how often it is shown
   * again, a parked turn's too; STATUS_REFRESH_MS without.
   */
  statusRefreshMs?: number;
  /**
   * A stored result's page on Spool's web pages, where people read it whole: replies link the
   * results their turn previewed, and `/spool result` its result. No links without.
   */
  resultPage?(toolCallId: string): string;
}

export interface DeliveryDeps {
  agent: TurnRunner;
  /** The inbox, the outbox and the lane leases. */
  ledger: DeliveryPort;
  search: HistorySearchPort;
  /** What a shared file becomes for the model: its text, or a description. */
  files: FileReader;
  approvals: ApprovalPort;
  questions: QuestionPort;
  /** Prompts tool servers offer people as commands; none without. */
  prompts?: PromptPort;
  /** Usage by person and channel, and the spend caps' holds; no caps and no `/usage` without. */
  spend?: SpendLedger;
  /** Cancels what calls made in a conversation still run as tasks: a Stop there ends them too. */
  cancelTasks?(conversation: ConversationKey): Promise<void>;
  /** People's sign-ins to servers used with each person's own account; no `/logins` without. */
  signIns?: SignInPort;
  /** People's ratings of answers; no feedback buttons' clicks are kept without. */
  feedback?: FeedbackPort;
  /** Scheduled prompts; none without. */
  schedules?: SchedulePort;
  /** Masks the bot's own secrets in what a prompt shows of a call's arguments. */
  mask?: (text: string) => string;
  logger: Logger;
  /** Told each time a reply (or the failure reply) has been delivered: for metrics. */
  onAnswered?(platform: string, outcome: Answered): void;
}
