import { errorMessage } from '../../errors.ts';
import type {
  InboundMessage,
  InboundEdit,
  ReplyLink,
  StopKind,
} from '../../ports/platform/delivery.ts';
import type {
  Access,
  Answered,
  ApprovalClick,
  Asker,
  Delivery,
  FormClick,
  FormClickOutcome,
  Handled,
  StopOutcome,
  HandleOptions,
  Outbound,
  FeedbackClick,
  FeedbackOutcome,
  WorkspacePlace,
} from '../../ports/platform/platform.ts';
import type { HistoryHit, StoredResult } from '../../ports/history.ts';
import type { ClickOutcome } from '../../ports/parked/approvals.ts';
import type { FormRequest } from '../../ports/parked/forms.ts';
import type { Naming, UsageReport } from '../../ports/spend.ts';
import { Lanes } from './lanes.ts';
import { policyFor } from '../rules/policy.ts';
import { ApprovalDesk } from '../waiting/approvals.ts';
import { QuestionDesk } from '../waiting/questions.ts';
import { reportStart, usageReport } from '../commands/usage-report.ts';
import type { DeliveryDeps, DeliveryOptions } from './engine-options.ts';
import { Platforms } from '../rules/platforms.ts';
import { Intake } from '../intake/intake.ts';
import { RunningTurns } from './stops.ts';
import { CutShort } from './cut-short.ts';
import { Outbox } from '../posts/outbox.ts';
import { Parking } from '../waiting/parking.ts';
import { replyTo } from './turn.ts';
import { Answerer } from './answer.ts';
import { followEdit } from '../posts/edits.ts';
import { closeStoppedPrompts } from '../waiting/stopped-prompts.ts';
import { monthStart, REASON_MAX_CHARS } from '../posts/feedback.ts';
import { WHOLE_RESULT } from '../posts/result-links.ts';
import { agentView } from '../posts/greeting.ts';
import { promptText } from '../commands/prompt-text.ts';
import { PROMPT_REFUSED } from '../posts/replies.ts';
import { STATUS_REFRESH_MS } from '../posts/status.ts';
import {
  loginsText,
  loginText,
  logoutArguments,
  logoutText,
  NO_PERSONAL_SERVERS,
} from '../commands/sign-ins.ts';
import { Scheduler } from '../schedules/scheduler.ts';
import {
  ScheduleDesk,
  type Cancellation,
  type ScheduleCanceller,
} from '../schedules/schedule-desk.ts';

export type { DeliveryDeps, DeliveryOptions } from './engine-options.ts';
export {
  FAILURE_REPLY,
  NOT_RECORDED_REPLY,
  fileRefusedNote,
  NOTHING_TO_READ_REPLY,
  PROMPT_REFUSED,
  STOPPED_REPLY,
  NEW_CONVERSATION_REPLY,
} from '../posts/replies.ts';

/** Who ends a workspace's turns and pauses its schedules: its uninstall. */
const UNINSTALLED = 'uninstalled';

/**
 * The one inbound path of every platform, in this order: record the message (before the platform
 * is told it arrived), apply the allow-lists, and hand it to its lane (see `Lanes`: one replica,
 * one message at a time, in order). To answer a message: resolve the conversation, run (or
 * resume) the turn, store the reply in the outbox, post what is not posted yet. A turn that stops
 * at calls awaiting approval parks its message until a click or its deadline.
 *
 * The work is done by its parts: intake.ts (record, allow-lists, acknowledge), answer.ts (one
 * message: turn.ts runs its turn, outbox.ts posts its reply), stops.ts (Stops and edits of running
 * turns), parking.ts (messages awaiting approval), edits.ts, lanes.ts (leases).
 */
export class DeliveryEngine implements Delivery {
  private readonly platforms: Platforms;
  private readonly intake: Intake;
  private readonly lanes: Lanes;
  private readonly desk: ApprovalDesk;
  private readonly questions: QuestionDesk;
  /** The turns this process runs, by inbox row: a Stop taken here ends one at once. */
  private readonly running: RunningTurns;
  private readonly parking: Parking;
  /** Scheduled prompts' ticks, and the commands that make them; none without a schedule store. */
  private readonly scheduler?: Scheduler;
  private readonly scheduleDesk?: ScheduleDesk;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DeliveryOptions,
  ) {
    const { ledger, logger } = deps;
    const { policy } = options;
    const work = (laneId: string) => this.lanes.work(laneId);
    this.platforms = new Platforms(policy);
    this.intake = new Intake({ ledger, logger, platforms: this.platforms, policy, work });
    this.desk = new ApprovalDesk(
      { approvals: deps.approvals, ledger, mask: deps.mask },
      { timeoutMs: options.approvalTimeoutMs },
    );
    this.questions = new QuestionDesk(
      { questions: deps.questions, ledger, logger },
      { timeoutMs: options.questionTimeoutMs, pollMs: options.pollMs },
    );
    this.running = new RunningTurns(ledger);
    const statusRefreshMs = options.statusRefreshMs ?? STATUS_REFRESH_MS;
    this.parking = new Parking({ ledger, desk: this.desk, policy, work, statusRefreshMs });
    const answerer = this.answerer();
    this.lanes = new Lanes(
      {
        ledger,
        logger,
        platforms: () => this.platforms.names(),
        // A scheduled tick starts its thread first, then is answered there.
        answer: (entry, signal, lease) =>
          this.scheduler?.opens(entry)
            ? this.scheduler.open(entry, lease)
            : answerer.answer(entry, signal, lease),
      },
      options,
    );
    if (deps.schedules) {
      const { schedules } = deps;
      const now = options.now ?? (() => new Date());
      this.scheduler = new Scheduler({
        schedules,
        ledger,
        logger,
        platforms: this.platforms,
        work,
        now,
      });
      this.scheduleDesk = new ScheduleDesk({
        schedules,
        platforms: this.platforms,
        now,
        defaultTimeZone: options.scheduleTimeZone ?? 'UTC',
        isAdmin: (who) => this.isAdmin(who, who.user),
      });
    }
  }

  /** Answering one message: its turn, its reply posted, or the failure reply. */
  private answerer(): Answerer {
    const { deps, options } = this;
    const cutShort = new CutShort();
    const turns = { ...deps, desk: this.desk, questions: this.questions, cutShort };
    return new Answerer({
      ledger: deps.ledger,
      logger: deps.logger,
      platforms: this.platforms,
      outbox: new Outbox(deps, options),
      running: this.running,
      cutShort,
      parking: this.parking,
      statusRefreshMs: options.statusRefreshMs ?? STATUS_REFRESH_MS,
      reply: (entry, outbound, run) => replyTo(turns, options, entry, outbound, run),
      stopped: (entry, outbound) =>
        closeStoppedPrompts({ ledger: deps.ledger, approvals: deps.approvals }, entry, outbound),
      answered: (entry, outcome: Answered) => {
        deps.onAnswered?.(entry.lane.platform, outcome);
        this.intake.settled(entry, outcome);
      },
      maxAttempts: options.maxAttempts,
    });
  }

  register(platform: string, outbound: Outbound, access: Access = {}): void {
    this.platforms.register(platform, outbound, access);
  }

  /**
   * Throws NotRecordedError when the message cannot be stored now (the database is away); it was
   * then not acknowledged. A message that can never be stored is dropped and named `malformed`.
   */
  async handleIncoming(unchecked: InboundMessage, options: HandleOptions = {}): Promise<Handled> {
    // Turns wait while messages are recorded and acknowledged (see Lanes.arrive).
    const arrived = this.lanes.arrive();
    try {
      return await this.intake.admit(unchecked, options);
    } finally {
      arrived();
    }
  }

  async recall(who: Asker, query: string): Promise<HistoryHit[] | undefined> {
    if (!this.platforms.permits(who)) return undefined;
    return this.deps.search.searchHistory(who.lane, { text: query, maxResults: 10 });
  }

  /**
   * What `who` has spent in the workspace (everyone's, for an admin the policy names), for
   * `/usage`; 'refused' for someone who may not talk to Spool here.
   */
  async usage(who: Asker, names: Naming): Promise<UsageReport | 'refused'> {
    const { spend } = this.deps;
    if (!spend || !this.platforms.permits(who)) return 'refused';
    const { currency } = this.options.policy ?? {};
    const everyone = this.isAdmin(who.lane, who.user);
    const now = new Date();
    const { platform, workspace } = who.lane;
    const [rows, feedback] = await Promise.all([
      spend.usage({
        platform,
        workspace,
        since: reportStart(now),
        ...(everyone ? {} : { user: who.user }),
      }),
      this.deps.feedback?.tally({
        platform,
        workspace,
        since: monthStart(now),
        ...(everyone ? {} : { askedBy: who.user }),
      }),
    ]);
    return usageReport(rows, { now, everyone, currency, ...names, ...(feedback && { feedback }) });
  }

  suggestedPrompts(who: Asker, contextChannel?: string) {
    if (!this.platforms.permits(who)) return 'refused' as const;
    return agentView(this.options.policy, who.lane, contextChannel).prompts;
  }

  /**
   * A person's 👍 or 👎 on an answer (or the reason for a 👎): one per person per answer, a
   * second click replacing the first.
   */
  async rateAnswer(click: FeedbackClick): Promise<FeedbackOutcome> {
    const { feedback } = this.deps;
    if (!feedback || !this.platforms.permits(click)) return 'refused';
    const { platform, workspace, channel } = click.lane;
    const reason = click.reason?.trim().slice(0, REASON_MAX_CHARS);
    return feedback.rate({
      scope: { platform, workspace, channel },
      inboxId: click.inboxId,
      user: click.user,
      rating: click.rating,
      ...(reason ? { reason } : {}),
    });
  }

  /**
   * `who`'s sign-ins to servers used with each person's own account (everyone's here, for an admin
   * the policy names), as text; 'refused' for someone who may not talk to Spool here.
   */
  async logins(who: Asker, names: Naming): Promise<string | 'refused'> {
    const { signIns } = this.deps;
    if (!this.platforms.permits(who)) return 'refused';
    if (!signIns) return NO_PERSONAL_SERVERS;
    const everyone = this.isAdmin(who.lane, who.user);
    const { platform, workspace } = who.lane;
    const listings = await signIns.logins({
      platform,
      workspace,
      ...(everyone ? {} : { user: who.user }),
    });
    return loginsText(listings, { everyone, names });
  }

  /**
   * `/spool login SERVER`: a link for `who` to sign in to the server as themselves ahead of any
   * call, for the adapter to show them alone; or what to tell them instead.
   */
  async login(who: Asker, server: string): Promise<string | 'refused'> {
    const { signIns } = this.deps;
    if (!this.platforms.permits(who)) return 'refused';
    if (!signIns) return NO_PERSONAL_SERVERS;
    const { platform, workspace } = who.lane;
    const link = await signIns.link(server.trim(), { platform, workspace, user: who.user });
    return loginText(server.trim(), link);
  }

  /**
   * Ends a sign-in: `who`'s own, or (for an admin) `whose`; `/spool logout SERVER [@person]`. What
   * to tell them, or 'refused'.
   */
  async logout(who: Asker, command: string, names: Naming): Promise<string | 'refused'> {
    const { signIns } = this.deps;
    if (!this.platforms.permits(who)) return 'refused';
    if (!signIns) return NO_PERSONAL_SERVERS;
    const asked = logoutArguments(command);
    if (!asked) return 'Which server? logout <server>, or logout <server> <person> for an admin.';
    const { server, whose } = asked;
    if (whose && whose !== who.user && !this.isAdmin(who.lane, who.user))
      return "Only an admin can end someone else's sign-in.";
    const { platform, workspace } = who.lane;
    const ended = await signIns.logout(server, { platform, workspace, user: whose ?? who.user });
    return logoutText(ended, server, whose === who.user ? undefined : whose, names);
  }

  /**
   * Whether the policy names `user` an admin, in a workspace of the platform's: direct messages
   * outside any are each their own person's alone.
   */
  private isAdmin(place: { platform: string; workspace: string }, user: string): boolean {
    const named = this.options.policy?.admins?.includes(user) ?? false;
    return named && !this.platforms.isDirectMessages(place);
  }

  /**
   * Lets the message parked on this call go on (its person signed in, say), here if this process
   * can take its lane.
   */
  wake(toolCallId: string): Promise<void> {
    return this.parking.wake(toolCallId);
  }

  async result(
    who: Asker,
    toolCallId: string,
  ): Promise<(StoredResult & { link?: ReplyLink }) | 'refused' | undefined> {
    if (!this.platforms.permits(who)) return 'refused';
    const found = await this.deps.search.storedResult(who.lane, toolCallId);
    const { resultPage } = this.options;
    if (!found || !resultPage) return found;
    return { ...found, link: { label: WHOLE_RESULT, url: resultPage(toolCallId) } };
  }

  /**
   * Only an approver's click counts (the channel's approvers, else whoever may talk to Spool
   * there).
   */
  async decideApproval(click: ApprovalClick): Promise<ClickOutcome> {
    const { approvers } = policyFor(this.options.policy, click.lane);
    const outcome = await this.desk.click(
      click,
      approvers ? approvers.includes(click.user) : this.platforms.permits(click),
    );
    // The turn that stopped at this call goes on, on whichever replica takes its lane.
    if (outcome.status === 'decided') await this.parking.wake(click.toolCallId);
    return outcome;
  }

  /**
   * Stops the turn of a message in `who`'s lane (the one with `messageKey`, else the oldest not
   * answered), on whichever replica runs it: here at once, elsewhere within half a second.
   */
  async stopTurn(who: Asker, messageKey?: string): Promise<StopOutcome> {
    if (!this.platforms.permits(who)) return 'refused';
    const stopped = await this.deps.ledger.requestStop(who.lane, who.user, messageKey);
    if (!stopped) return 'nothing';
    this.running.abort(stopped.inboxId, 'stop' satisfies StopKind);
    // A task the turn waits on, parked, is ended at its server now; one followed by a running turn
    // is ended by the turn's abort too.
    await this.deps
      .cancelTasks?.(who.lane)
      .catch((error: unknown) =>
        this.deps.logger.warn(`Tasks of a stopped turn not cancelled: ${errorMessage(error)}`),
      );
    // A message parked for an approval ends now, here if this process can take its lane.
    this.lanes.work(stopped.laneId);
    return 'stopping';
  }

  async workspaceGone(place: WorkspacePlace): Promise<{ ended: number; paused: number }> {
    const ended = await this.deps.ledger.supersedeWorkspace(place, UNINSTALLED);
    for (const { inboxId } of ended) this.running.abort(inboxId, 'superseded' satisfies StopKind);
    // A message parked on a click or a sign-in ends now, here if this process can take its lane.
    for (const laneId of new Set(ended.map((e) => e.laneId))) this.lanes.work(laneId);
    const paused = (await this.deps.schedules?.pauseWorkspace(place, UNINSTALLED)) ?? 0;
    this.deps.logger.info('Uninstalled: the workspace’s turns end, its schedules pause', {
      ...place,
      ended: ended.length,
      paused,
    });
    return { ended: ended.length, paused };
  }

  async workspaceBack(place: WorkspacePlace): Promise<{ resumed: number }> {
    return { resumed: (await this.deps.schedules?.resumeWorkspace(place, UNINSTALLED)) ?? 0 };
  }

  /** A person's edit or deletion of a message Spool recorded (see edits.ts). */
  editIncoming(edit: InboundEdit): Promise<'edited' | 'deleted' | 'ignored'> {
    return followEdit(
      {
        ledger: this.deps.ledger,
        logger: this.deps.logger,
        abort: (inboxId, why) => this.running.abort(inboxId, why),
        work: (laneId) => this.lanes.work(laneId),
        handleIncoming: (message) => this.handleIncoming(message),
      },
      edit,
    );
  }

  answerForm(click: FormClick): Promise<FormClickOutcome> {
    return this.questions.answer(click);
  }

  form(who: Asker, questionId: string): Promise<FormRequest | FormClickOutcome> {
    return this.questions.form(who, questionId);
  }

  async promptText(who: Asker, command: string): Promise<{ text: string } | { problem: string }> {
    if (!this.platforms.permits(who)) return { problem: PROMPT_REFUSED };
    const { prompts, logger } = this.deps;
    return promptText({ prompts, logger, policy: this.options.policy }, who, command);
  }

  async schedule(who: Asker, words: string, timeZone?: string): Promise<string | undefined> {
    if (!this.scheduleDesk) return 'Schedules are not available here.';
    return this.scheduleDesk.command(who, words, timeZone);
  }

  /** `schedule cancel`'s cancellation, for the web pages; undefined where there are no schedules. */
  async cancelSchedule(who: ScheduleCanceller, id: string): Promise<Cancellation | undefined> {
    return this.scheduleDesk?.cancelOne(who, id);
  }

  /**
   * Starts taking over lanes and putting due ticks in the inbox: at once (what an earlier run left
   * pending), then every `pollMs`.
   */
  start(): void {
    this.lanes.start();
    this.scheduler?.start(this.options.pollMs);
  }

  /**
   * Starts no new message, lets running turns finish for up to `graceMs`, then cuts the rest
   * short and releases every lease. What is unfinished stays pending for the next holder.
   */
  stop(graceMs: number): Promise<void> {
    this.scheduler?.stop();
    return this.lanes.stop(graceMs);
  }
}
