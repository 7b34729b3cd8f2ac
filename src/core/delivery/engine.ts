import { KeyedQueue } from './keyed-queue.ts';
import {
  FileRefusedError,
  NotRecordedError,
  type AcquiredLease,
  type InboundMessage,
  type InboxEntry,
  type DeliveryPort,
  type InboundEdit,
  type PendingEntry,
  type ReplyChunk,
  type StopKind,
  type ReplyPart,
} from '../ports/delivery.ts';
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
} from '../ports/platform.ts';
import { permits } from './access.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { LeaseLostError, type Lease } from '../ports/store.ts';
import { wellFormed } from '../well-formed.ts';
import type { HistoryHit, HistorySearchPort, StoredResult } from '../ports/history.ts';
import { Lanes, WorkCut, type LaneOptions } from './lanes.ts';
import type {
  PendingCall,
  RedoReason,
  TurnActivity,
  TurnPolicy,
  TurnRunner,
} from '../ports/turns.ts';
import { StatusLine, statusText, waitingForAnswer, waitingForApproval } from './status.ts';
import type { FileReader } from '../ports/files.ts';
import { readSharedFiles, type FileLimits } from './shared-files.ts';
import { replyAsFile, replyOfFile } from './reply-file.ts';
import { policyFor, serverAllowed, toolAllowed, toolMatches, type Policy } from './policy.ts';
import { ApprovalDesk } from './approvals.ts';
import { problemsOf } from './malformed.ts';
import type { ApprovalPort, ClickOutcome } from '../ports/approvals.ts';
import type { FormRequest, QuestionPort } from '../ports/forms.ts';
import { QuestionDesk } from './questions.ts';
import type { PromptPort } from '../ports/prompts.ts';
import { parsePromptCommand, promptList, promptProblem } from './prompts.ts';
import type { Naming, SpendLedger, UsageReport } from '../ports/spend.ts';
import { turnSpend } from './spend.ts';
import { reportStart, usageReport } from './usage-report.ts';

export const FAILURE_REPLY = 'Sorry, something went wrong on my side. Please try again.';
/**
 * To someone whose message could not be stored, where the platform will not send it again
 * (Discord).
 */
export const NOT_RECORDED_REPLY =
  'I could not take that message: my database is not answering, so nothing of it was saved. Please send it again in a minute.';
/** Below a reply posted as messages because its file was refused. */
export const fileRefusedNote = (reason: string) =>
  `I could not post this long reply as a file (${reason}), so here it is as messages.`;
/**
 * To a message with no words and no files (a bare mention, an empty forward): nothing is made up
 * for it.
 */
export const NOTHING_TO_READ_REPLY =
  'Your message reached me, but I found nothing in it I can read: no words and no files. What can I do for you?';
export const PROMPT_REFUSED = 'Spool is not enabled for you here.';
/** The reply to a message whose turn a person stopped. */
export const STOPPED_REPLY =
  'Stopped. What I did so far is kept: say "go on" and I will pick up from there.';
/** How often this process looks for Stops other replicas took for the turns it runs. */
const STOP_POLL_MS = 500;
export const NEW_CONVERSATION_REPLY =
  'Started a new conversation here. Earlier ones stay searchable with `/recall`.';

/** How many messages whose attempt this process cut short it remembers, with why. */
const CUT_SHORT_KEPT = 1_000;

/** A status shown at most once a second, and again before Slack drops it (two minutes). */
const STATUS_TIMING = { intervalMs: 1_000, refreshMs: 90_000 };

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
  /** A call that needs approval and is not decided within this long is denied. */
  approvalTimeoutMs: number;
  /** A tool's question not answered within this long is declined. */
  questionTimeoutMs: number;
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
  /** Masks the bot's own secrets in what a prompt shows of a call's arguments. */
  mask?: (text: string) => string;
  logger: Logger;
  /** Told each time a reply (or the failure reply) has been delivered: for metrics. */
  onAnswered?(platform: string, outcome: Answered): void;
}

/**
 * The one inbound path of every platform, in this order: record the message (before the platform
 * is told it arrived), apply the allow-lists, and hand it to its lane (see `Lanes`: one replica,
 * one message at a time, in order). To answer a message: resolve the conversation, run (or
 * resume) the turn, store the reply in the outbox, post what is not posted yet. A turn that stops
 * at calls awaiting approval parks its message until a click or its deadline.
 */
export class DeliveryEngine implements Delivery {
  private readonly platforms = new Map<string, { outbound: Outbound; access: Access }>();
  private readonly waiters = new Map<string, (outcome: Answered) => void>();
  private readonly recording = new KeyedQueue();
  private readonly lanes: Lanes;
  private readonly desk: ApprovalDesk;
  private readonly questions: QuestionDesk;
  /** The turns this process runs, by inbox row: a Stop taken here ends one at once. */
  private readonly running = new Map<string, AbortController>();
  private stopWatch?: NodeJS.Timeout;
  /** Messages whose attempt here was cut short, and why: said to the turn that resumes them. */
  private readonly cutShort = new Map<string, RedoReason>();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DeliveryOptions,
  ) {
    this.desk = new ApprovalDesk(
      { approvals: deps.approvals, ledger: deps.ledger, mask: deps.mask },
      { timeoutMs: options.approvalTimeoutMs },
    );
    this.questions = new QuestionDesk(
      { questions: deps.questions, ledger: deps.ledger, logger: deps.logger },
      { timeoutMs: options.questionTimeoutMs, pollMs: options.pollMs },
    );
    const answer = (entry: PendingEntry, signal: AbortSignal, lease: AcquiredLease) =>
      this.answer(entry, signal, lease);
    this.lanes = new Lanes(
      {
        ledger: deps.ledger,
        logger: deps.logger,
        platforms: () => [...this.platforms.keys()],
        answer,
      },
      options,
    );
  }

  register(platform: string, outbound: Outbound, access: Access = {}): void {
    this.platforms.set(platform, { outbound, access });
  }

  /**
   * Throws NotRecordedError when the message cannot be stored now (the database is away); it was
   * then not acknowledged. A message that can never be stored is dropped and named `malformed`.
   */
  async handleIncoming(unchecked: InboundMessage, options: HandleOptions = {}): Promise<Handled> {
    // Turns wait while messages are recorded and acknowledged (see Lanes.arrive).
    const arrived = this.lanes.arrive();
    try {
      return await this.admit(unchecked, options);
    } finally {
      arrived();
    }
  }

  /** handleIncoming's work: record, acknowledge, hand to the lane. */
  private async admit(unchecked: InboundMessage, options: HandleOptions): Promise<Handled> {
    const problems = problemsOf(unchecked);
    if (problems.length > 0) {
      this.deps.logger.warn('Dropped a malformed message', {
        platform: String(unchecked.lane?.platform),
        problems: problems.join(', '),
      });
      return { status: 'malformed', problems };
    }
    if (unchecked.fromApp && !policyFor(this.options.policy, unchecked.lane).apps)
      return { status: 'ignored' };
    // Stored before anything else, so made storable first (NUL and lone surrogates; see
    // wellFormed).
    const message = { ...unchecked, text: wellFormed(unchecked.text) };
    const { outbound } = this.platform(message.lane.platform);
    const refused = !this.permits(message);
    let entry: InboxEntry | undefined;
    try {
      // One lane's messages are stored in the order they arrived here: their inbox ids are their
      // order.
      entry = await this.recording.run(JSON.stringify(message.lane), () =>
        this.deps.ledger.record(message, refused),
      );
    } catch (error) {
      // Not stored, so not acknowledged either: the platform (or the person) sends it again.
      this.deps.logger.error('Could not record an inbound message', {
        platform: message.lane.platform,
        error: errorMessage(error),
      });
      throw new NotRecordedError(`the message could not be stored: ${errorMessage(error)}`);
    }
    if (!entry) return { status: 'duplicate' };
    if (refused) {
      await outbound
        .refuse(message)
        .catch((error: unknown) =>
          this.deps.logger.warn('Could not send a refusal', { error: errorMessage(error) }),
        );
      return { status: 'refused' };
    }
    await options
      .acknowledge?.()
      .catch((error: unknown) =>
        this.deps.logger.warn('Could not acknowledge a message', { error: errorMessage(error) }),
      );
    const answered = options.waitForReply
      ? new Promise<Answered>((resolve) => this.waiters.set(entry.id, resolve))
      : undefined;
    this.lanes.work(entry.laneId);
    return { status: 'accepted', answered };
  }

  async recall(who: Asker, query: string): Promise<HistoryHit[] | undefined> {
    if (!this.permits(who)) return undefined;
    return this.deps.search.searchHistory(who.lane, { text: query, maxResults: 10 });
  }

  /**
   * What `who` has spent in the workspace (everyone's, for an admin the policy names), for
   * `/usage`; 'refused' for someone who may not talk to Spool here.
   */
  async usage(who: Asker, names: Naming): Promise<UsageReport | 'refused'> {
    const { spend } = this.deps;
    if (!spend || !this.permits(who)) return 'refused';
    const { admins, currency } = this.options.policy ?? {};
    const everyone = admins?.includes(who.user) ?? false;
    const now = new Date();
    const rows = await spend.usage({
      platform: who.lane.platform,
      workspace: who.lane.workspace,
      since: reportStart(now),
      ...(everyone ? {} : { user: who.user }),
    });
    return usageReport(rows, { now, everyone, currency, ...names });
  }

  async result(who: Asker, toolCallId: string): Promise<StoredResult | 'refused' | undefined> {
    if (!this.permits(who)) return 'refused';
    return this.deps.search.storedResult(who.lane, toolCallId);
  }

  /**
   * Only an approver's click counts (the channel's approvers, else whoever may talk to Spool
   * there).
   */
  async decideApproval(click: ApprovalClick): Promise<ClickOutcome> {
    const { approvers } = policyFor(this.options.policy, click.lane);
    const outcome = await this.desk.click(
      click,
      approvers ? approvers.includes(click.user) : this.permits(click),
    );
    // The turn that stopped at this call goes on, on whichever replica takes its lane.
    if (outcome.status === 'decided') await this.wake(click.toolCallId);
    return outcome;
  }

  /**
   * Stops the turn of a message in `who`'s lane (the one with `messageKey`, else the oldest not
   * answered), on whichever replica runs it: here at once, elsewhere within STOP_POLL_MS.
   */
  async stopTurn(who: Asker, messageKey?: string): Promise<StopOutcome> {
    if (!this.permits(who)) return 'refused';
    const stopped = await this.deps.ledger.requestStop(who.lane, who.user, messageKey);
    if (!stopped) return 'nothing';
    this.running.get(stopped.inboxId)?.abort('stop' satisfies StopKind);
    // A message parked for an approval ends now, here if this process can take its lane.
    this.lanes.work(stopped.laneId);
    return 'stopping';
  }

  /**
   * A person's edit of a message Spool recorded: its turn is run again with the new words, the
   * answer replacing the one posted, if any; only the author's edit counts, and only of the
   * thread's last answered message or a later one. A deletion ends a turn not yet answered, with
   * nothing posted.
   */
  async editIncoming(edit: InboundEdit): Promise<'edited' | 'deleted' | 'ignored'> {
    const found = await this.deps.ledger.findMessage(edit.lane.platform, edit.messageKey);
    if (!found || found.entry.user !== edit.user) return 'ignored';
    const answered = found.status === 'answered';
    if (!(answered ? found.latest : found.status === 'pending' || found.status === 'waiting')) {
      this.deps.logger.debug('Not following an edit of an older message', {
        platform: edit.lane.platform,
        inbox: found.entry.id,
      });
      return 'ignored';
    }
    const laneId = answered
      ? undefined
      : await this.deps.ledger.supersede(found.entry.id, edit.user);
    if (laneId) {
      this.running.get(found.entry.id)?.abort('superseded' satisfies StopKind);
      this.lanes.work(laneId);
    }
    if (edit.text === undefined) return 'deleted';
    const { delivery } = found.entry;
    await this.handleIncoming({
      ...found.entry,
      messageKey: edit.editKey,
      kind: 'message',
      text: edit.text,
      // Unless its turn was ended in time, the old answer stands (posted, or saved and about to
      // be): the new one takes its place, message by message.
      delivery: laneId ? delivery : { ...delivery, replaces: found.entry.id },
    });
    return 'edited';
  }

  answerForm(click: FormClick): Promise<FormClickOutcome> {
    return this.questions.answer(click);
  }

  form(who: Asker, questionId: string): Promise<FormRequest | FormClickOutcome> {
    return this.questions.form(who, questionId);
  }

  async promptText(who: Asker, command: string): Promise<{ text: string } | { problem: string }> {
    if (!this.permits(who)) return { problem: PROMPT_REFUSED };
    // Only the servers the channel's tools reach: another's prompts are neither listed nor fetched.
    const { tools } = policyFor(this.options.policy, who.lane);
    const prompts = (this.deps.prompts?.list() ?? []).filter((p) => serverAllowed(tools, p.server));
    if (!command.trim()) return { problem: promptList(prompts) };
    const parsed = parsePromptCommand(command);
    if ('problem' in parsed) return { problem: `${parsed.problem}\n${promptList(prompts)}` };
    const problem = promptProblem(parsed, prompts);
    if (problem) return { problem };
    try {
      return { text: await this.deps.prompts!.render(parsed.server, parsed.name, parsed.args) };
    } catch (error) {
      this.deps.logger.warn('A prompt could not be given', {
        server: parsed.server,
        error: errorMessage(error),
      });
      return {
        problem: `\`${parsed.server}\` could not give its prompt \`${parsed.name}\`: ${errorMessage(error)}`,
      };
    }
  }

  /** Starts taking over lanes: at once (what an earlier run left pending), then every `pollMs`. */
  start(): void {
    this.lanes.start();
  }

  /**
   * Starts no new message, lets running turns finish for up to `graceMs`, then cuts the rest
   * short and releases every lease. What is unfinished stays pending for the next holder.
   */
  stop(graceMs: number): Promise<void> {
    return this.lanes.stop(graceMs);
  }

  /**
   * The platform's allow-lists, with the users or roles the channel's policy names in place of its
   * own.
   */
  private permits(who: Asker): boolean {
    const { users, roles } = policyFor(this.options.policy, who.lane);
    return permits(
      {
        ...this.platform(who.lane.platform).access,
        ...(users ? { users } : {}),
        ...(roles ? { roles } : {}),
      },
      who,
    );
  }

  /** The channel's own prompt, model, tools and approvals, as the turn takes them. */
  private turnPolicy(entry: InboxEntry, outbound: Outbound): TurnPolicy {
    const { systemPrompt, systemPromptAddition, model, tools, approve } = policyFor(
      this.options.policy,
      entry.lane,
    );
    return {
      systemPrompt,
      systemPromptAddition,
      model,
      ...(tools ? { offersTool: (name: string) => toolAllowed(tools, name) } : {}),
      ...(approve
        ? { approval: this.desk.gate(entry, outbound, (name) => toolMatches(approve, name)) }
        : {}),
    };
  }

  private platform(name: string): { outbound: Outbound; access: Access } {
    const platform = this.platforms.get(name);
    if (!platform) throw new Error(`No outbound registered for platform "${name}"`);
    return platform;
  }

  /**
   * Answers one message; false when the lane must stop (a retry is due later, or the lease is
   * gone). Its turn's steps, its reply, each post and its end carry `lease`, and are refused once
   * another holder took the lane (LeaseLostError): then nothing more of it is written or posted.
   */
  private async answer(
    entry: PendingEntry,
    signal: AbortSignal,
    lease: AcquiredLease,
  ): Promise<boolean> {
    const { outbound } = this.platform(entry.lane.platform);
    const { ledger } = this.deps;
    try {
      // Shown on a resumed message too, so that whatever a crashed process showed is cleared.
      const endWorking = await outbound.showWorking(entry);
      const status = outbound.showStatus
        ? new StatusLine((text) => outbound.showStatus!(entry, text), STATUS_TIMING)
        : undefined;
      let stored: ReplyChunk[];
      let chunks: ReplyChunk[] = [];
      // A reply stored by an earlier attempt came from a turn that ran to its end.
      let outcome: Answered = 'ok';
      let awaiting: PendingCall[] = [];
      try {
        stored = entry.replySaved ? await ledger.replyOf(entry.id) : [];
        if (stored.length > 0) chunks = stored;
        else {
          const reply = await this.replyUnlessStopped(entry, outbound, signal, lease, status);
          if ('awaiting' in reply) awaiting = reply.awaiting;
          else if (!('superseded' in reply)) {
            outcome = reply.outcome;
            const parts = this.replyParts(entry, outbound, reply.text);
            chunks = await ledger.saveReply(entry.id, parts, lease);
          }
        }
      } finally {
        status?.stop();
        await endWorking(chunks.some((chunk) => !chunk.platformMessageId));
      }
      if (awaiting.length > 0) return await this.awaitDecisions(entry, outbound, awaiting);
      await this.deliver(entry, outbound, chunks, stored.length > 0, lease);
      await ledger.finish(entry.id, 'answered', lease);
      this.answered(entry, outcome);
      return true;
    } catch (error) {
      // Shutting down, or the lease was lost: the message stays pending for whoever holds the lane
      // next.
      if (signal.aborted) {
        const reason: unknown = signal.reason;
        this.cutShortBy(entry, reason instanceof WorkCut ? reason.why : 'shutdown');
        return false;
      }
      if (error instanceof LeaseLostError) {
        this.cutShortBy(entry, 'lease_lost');
        this.deps.logger.warn('The lane was taken over: its new holder answers the message', {
          inbox: entry.id,
          error: errorMessage(error),
        });
        return false;
      }
      return this.failed(entry, outbound, error, lease);
    }
  }

  private cutShortBy(entry: InboxEntry, why: RedoReason): void {
    this.cutShort.delete(entry.id);
    this.cutShort.set(entry.id, why);
    if (this.cutShort.size > CUT_SHORT_KEPT)
      this.cutShort.delete(this.cutShort.keys().next().value!);
  }

  /**
   * Why an earlier attempt at the message ended, for its turn to count what it starts again: as
   * this process cut it short, else as the lease was found: taken from a holder that stopped
   * renewing it (a crash), or released by one (a shutdown, or a failed attempt).
   */
  private resumedAfter(entry: InboxEntry, lease: AcquiredLease): RedoReason {
    const here = this.cutShort.get(entry.id);
    this.cutShort.delete(entry.id);
    if (here) return here;
    if (lease.takenOver) return 'crash';
    return entry.attempts > 0 ? 'error' : 'shutdown';
  }

  /**
   * Posts what of the reply is not posted yet, in order, each chunk claimed under `lease` first. A
   * file the platform refuses for good becomes messages in its place, with a line saying why: the
   * answer is never lost to its upload.
   */
  private async deliver(
    entry: PendingEntry,
    outbound: Outbound,
    chunks: ReplyChunk[],
    resumed: boolean,
    lease: Lease,
  ): Promise<void> {
    const queue = chunks.filter((chunk) => !chunk.platformMessageId);
    const { replaced, files } = await this.replacedAnswer(entry, outbound);
    for (let chunk = queue.shift(); chunk; chunk = queue.shift()) {
      if (!(await this.deps.ledger.claimPost(chunk.id, lease, this.options.leaseMs))) continue;
      const outgoing = {
        inboxId: entry.id,
        seq: chunk.seq,
        text: chunk.text,
        ...(chunk.file ? { file: chunk.file } : {}),
      };
      // An edited question's answer: a message of the old answer is edited to it (again, after a
      // crash: the same text).
      const inPlace = chunk.file ? undefined : replaced[chunk.seq];
      if (inPlace) {
        await outbound.edit!(entry, inPlace, outgoing);
        await this.deps.ledger.markPosted(chunk.id, inPlace);
        continue;
      }
      // A chunk stored before this attempt may have been posted by a process that died before
      // recording it.
      const found = resumed ? await outbound.findPosted?.(entry, outgoing) : undefined;
      let posted: string;
      try {
        posted = found ?? (await outbound.post(entry, outgoing));
      } catch (error) {
        if (!(chunk.file && error instanceof FileRefusedError)) throw error;
        this.deps.logger.warn('The platform refused a reply file; posting it as messages', {
          reason: error.message,
        });
        const note = `_(${fileRefusedNote(error.message)})_`;
        const parts = outbound
          .render(`${replyOfFile(chunk.file)}\n\n${note}`)
          .map((text) => ({ text }));
        const reply = await this.deps.ledger.replaceFile(entry.id, chunk.id, parts);
        queue.unshift(...reply.filter((c) => c.seq >= chunk!.seq && !c.platformMessageId));
        continue;
      }
      await this.deps.ledger.markPosted(chunk.id, posted);
    }
    // The replaced answer's files go once the new answer is out (again after a crash: no error).
    for (const file of files) await outbound.removeFile!(entry, file);
  }

  /**
   * The answer an edited question replaces: its posted messages by seq, to edit in place (text
   * ones only), and its files, to take back.
   */
  private async replacedAnswer(
    entry: InboxEntry,
    outbound: Outbound,
  ): Promise<{ replaced: string[]; files: string[] }> {
    const replaces = entry.delivery.replaces;
    if (!replaces || !outbound.edit) return { replaced: [], files: [] };
    const old = await this.deps.ledger.replyOf(replaces);
    const posted = (chunk: ReplyChunk) => chunk.platformMessageId ?? '';
    return {
      replaced: old.map((chunk) => (chunk.file ? '' : posted(chunk))),
      files: outbound.removeFile ? old.filter((c) => c.file && posted(c)).map(posted) : [],
    };
  }

  /**
   * The reply as the platform's messages, or, longer than a few of them, as one file with a
   * message.
   */
  private replyParts(entry: InboxEntry, outbound: Outbound, text: string): ReplyPart[] {
    if (outbound.postsFiles && text.length > this.options.replyFileChars)
      return [replyAsFile(text, entry.id)];
    return outbound.render(text).map((part) => ({ text: part }));
  }

  /**
   * The turn's reply, or STOPPED_REPLY once a person stopped it: what the turn stored so far stays,
   * for a later "go on".
   */
  private async replyUnlessStopped(
    entry: PendingEntry,
    outbound: Outbound,
    signal: AbortSignal,
    lease: AcquiredLease,
    status?: StatusLine,
  ): Promise<Awaited<ReturnType<DeliveryEngine['reply']>> | { superseded: true }> {
    const ended = (why: StopKind) =>
      why === 'superseded'
        ? ({ superseded: true } as const)
        : { text: STOPPED_REPLY, outcome: 'ok' as const };
    if (entry.stopped) return ended(entry.stopped);
    const stop = new AbortController();
    this.running.set(entry.id, stop);
    this.watchStops();
    try {
      const both = AbortSignal.any([signal, stop.signal]);
      return await this.reply(entry, outbound, both, lease, status);
    } catch (error) {
      if (!stop.signal.aborted || signal.aborted) throw error;
      return ended(stop.signal.reason as StopKind);
    } finally {
      this.running.delete(entry.id);
    }
  }

  /**
   * While this process runs turns, one read every STOP_POLL_MS finds the Stops and edits other
   * replicas took for them, however many run.
   */
  private watchStops(): void {
    if (this.stopWatch) return;
    this.stopWatch = setInterval(() => {
      if (this.running.size === 0) {
        clearInterval(this.stopWatch);
        this.stopWatch = undefined;
        return;
      }
      void this.deps.ledger.stopsAmong([...this.running.keys()]).then(
        (stopped) => stopped.forEach((why, id) => this.running.get(id)?.abort(why)),
        // The database is away: the turn finds out on its own, and the next read tries again.
        () => {},
      );
    }, STOP_POLL_MS).unref();
  }

  private async reply(
    entry: PendingEntry,
    outbound: Outbound,
    signal: AbortSignal,
    lease: AcquiredLease,
    status?: StatusLine,
  ): Promise<{ text: string; outcome: Answered } | { awaiting: PendingCall[] }> {
    if (entry.kind === 'new_conversation') {
      await this.deps.ledger.startConversation(entry);
      return { text: NEW_CONVERSATION_REPLY, outcome: 'ok' };
    }
    if (!entry.text.trim() && !entry.files?.length)
      return { text: NOTHING_TO_READ_REPLY, outcome: 'ok' };
    const { conversation, fresh } = entry.conversation
      ? { conversation: entry.conversation, fresh: false }
      : await this.deps.ledger.conversationFor(entry);
    const text = (fresh && (await outbound.threadContext?.(entry))) || entry.text;
    const notes: string[] = [];
    const files = entry.files?.length
      ? async () => {
          const read = await readSharedFiles(
            entry,
            outbound,
            this.deps.files,
            this.options.files,
            signal,
          );
          notes.push(...read.notes);
          return read.files;
        }
      : undefined;
    const options = {
      inboxId: entry.id,
      signal,
      fence: { laneId: lease.laneId, generation: lease.generation },
      resumedAfter: this.resumedAfter(entry, lease),
      files,
      policy: this.turnPolicy(entry, outbound),
      askForm: (request: FormRequest) => {
        status?.set(waitingForAnswer(request.from));
        return this.questions.ask(entry, outbound, request, signal);
      },
      onActivity: status && ((activity: TurnActivity) => status.set(statusText(activity))),
      spend: turnSpend(
        { ...entry.lane, user: entry.user },
        this.options.policy ?? {},
        this.deps.spend,
      ),
    };
    let result = await this.deps.agent.runTurn(conversation, text, options);
    // Where the person is at hand (the console), they are asked now and the turn goes on at once.
    while (result.status === 'awaiting_approval' && outbound.askApproval) {
      await this.desk.ask(entry, { askApproval: outbound.askApproval }, result.calls);
      result = await this.deps.agent.runTurn(conversation, text, options);
    }
    // A turn cut short by shutdown is resumed later, not answered with its cancellation.
    signal.throwIfAborted();
    if (result.status === 'awaiting_approval') return { awaiting: result.calls };
    return {
      text: [result.reply, ...notes.map((note) => `_(${note})_`)].join('\n\n'),
      outcome: result.status === 'failed' ? 'failed' : 'ok',
    };
  }

  /**
   * A turn stopped at calls awaiting a decision: their prompts are posted, and the message waits,
   * holding the lane's later messages back, until a click wakes it or its deadline comes (found
   * by the poll of whichever replica runs). No lease is held and nothing polls for it meanwhile.
   */
  private async awaitDecisions(
    entry: InboxEntry,
    outbound: Outbound,
    calls: PendingCall[],
  ): Promise<boolean> {
    const due = await this.desk.prompt(entry, outbound, calls);
    // Until the turn is taken up again (its working indicator replaces this), after the prompts: a
    // message posted in the thread clears a Slack status.
    const { approvers } = policyFor(this.options.policy, entry.lane);
    const waiting = waitingForApproval(
      calls.map((call) => call.name),
      approvers,
      entry.lane.platform,
    );
    await outbound.showStatus?.(entry, waiting).catch(() => {});
    await this.deps.ledger.awaitDecision(entry.id, due);
    // A click between the prompt and the line above found nothing waiting to wake.
    if (await this.desk.anyDecided(entry.lane, calls)) await this.deps.ledger.wake(calls[0]!.id);
    return true;
  }

  /**
   * Lets a message that awaits the decision on this call go on, here if this process can take its
   * lane.
   */
  private async wake(toolCallId: string): Promise<void> {
    const laneId = await this.deps.ledger.wake(toolCallId);
    if (laneId) this.lanes.work(laneId);
  }

  private async failed(
    entry: InboxEntry,
    outbound: Outbound,
    error: unknown,
    lease: Lease,
  ): Promise<boolean> {
    const attempts = entry.attempts + 1;
    this.deps.logger.error('Could not answer a message', {
      platform: entry.lane.platform,
      inbox: entry.id,
      attempts,
      error: errorMessage(error),
    });
    try {
      if (attempts < this.options.maxAttempts) {
        this.cutShortBy(entry, 'error');
        await this.deps.ledger.retryLater(entry.id, 1_000 * 2 ** attempts);
        return false;
      }
      await outbound
        .post(entry, { seq: 0, text: FAILURE_REPLY })
        .catch((error: unknown) =>
          this.deps.logger.warn('Could not post the failure reply', { error: errorMessage(error) }),
        );
      await this.deps.ledger.finish(entry.id, 'failed', lease);
      this.answered(entry, 'failed');
      return true;
    } catch {
      // The database is down too: the lease runs out and the message is tried again.
      return false;
    }
  }

  private answered(entry: InboxEntry, outcome: Answered): void {
    this.deps.onAnswered?.(entry.lane.platform, outcome);
    this.waiters.get(entry.id)?.(outcome);
    this.waiters.delete(entry.id);
  }
}
