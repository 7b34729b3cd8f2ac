import { KeyedQueue } from './keyed-queue.ts';
import { NotRecordedError, type InboundMessage, type InboxEntry, type InboxPort, type Outbound, type PendingEntry, type ReplyChunk, type ReplyPart } from '../ports/inbox.ts';
import { permits, type Access } from './access.ts';
import { withLogFields, type Logger } from '../logger.ts';
import { wellFormed } from '../well-formed.ts';
import type { HistoryHit, HistorySearchPort, StoredResult } from '../ports/history.ts';
import type { TurnPolicy, TurnRunner } from '../ports/turns.ts';
import type { FileReader } from '../ports/files.ts';
import { readSharedFiles, type FileLimits } from './shared-files.ts';
import { replyAsFile } from './reply-file.ts';
import { policyFor, toolAllowed, toolMatches, type Policy } from './policy.ts';
import { ApprovalDesk } from './approvals.ts';
import type { ApprovalPort, ApprovalState } from '../ports/approvals.ts';

export const FAILURE_REPLY = 'Sorry, something went wrong on my side. Please try again.';
/** To someone whose message could not be stored, where the platform will not send it again (Discord). */
export const NOT_RECORDED_REPLY = 'I could not take that message: my database is not answering, so nothing of it was saved. Please send it again in a minute.';
export const NEW_CONVERSATION_REPLY = 'Started a new conversation here. Earlier ones stay searchable with `/recall`.';

export interface PipelineOptions {
  /** This process's name in lease rows: unique per process, so a restart never inherits a live lease. */
  holder: string;
  /** A lane whose holder stops renewing is taken over after this long. */
  leaseMs: number;
  /** How often to look for lanes with pending messages and no live lease (startup, takeover). */
  pollMs: number;
  /** Tries at answering one message, when the database or the platform fails, before a failure reply. */
  maxAttempts: number;
  /** What of the files shared with a message is read. */
  files: FileLimits;
  /** A longer reply is posted as a file, where the platform posts files. */
  replyFileChars: number;
  /** Per-channel rules over the defaults (the platform's allow-lists, the agent's prompt, model and tools). */
  policy?: Policy;
  /** A call that needs approval and is not decided within this long is denied. */
  approvalTimeoutMs: number;
}

export interface PipelineDeps {
  agent: TurnRunner;
  inbox: InboxPort;
  search: HistorySearchPort;
  /** What a shared file becomes for the model: its text, or a description. */
  files: FileReader;
  approvals: ApprovalPort;
  /** Masks the bot's own secrets in what a prompt shows of a call's arguments. */
  mask?: (text: string) => string;
  logger: Logger;
  /** Told each time a reply (or the failure reply) has been delivered: for metrics. */
  onAnswered?(platform: string, outcome: Answered): void;
}

export interface HandleOptions {
  /** Tells the platform the message arrived (Discord's deferral); called once it is stored. */
  acknowledge?: () => Promise<void>;
  /** Resolve `answered` when this process has delivered the reply (the console waits for it). */
  waitForReply?: boolean;
}

/** How a delivered reply came about: `failed` when it tells the user the turn failed. */
export type Answered = 'ok' | 'failed';

/** A click on an approval prompt's button. */
export interface ApprovalClick extends Pick<InboundMessage, 'lane' | 'user' | 'roles'> {
  toolCallId: string;
  approve: boolean;
}

/** What a click came to: `decided` when it was the first decision, `already` when one came before it. */
export type ClickOutcome = { status: 'decided' | 'already'; state: ApprovalState } | { status: 'not_allowed' | 'unknown' };

export type Handled = { status: 'accepted'; answered?: Promise<Answered> } | { status: 'duplicate' | 'refused' };

interface LaneWork {
  held: boolean;
  /** A message arrived while the lane was being worked: look again before letting go. */
  again: boolean;
  abort: AbortController;
  done: Promise<void>;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The one inbound path of every platform, in this order: record the message (before the platform
 * is told it arrived), apply the allow-lists, and hand it to its lane. A lane is worked by the
 * one replica holding its lease, one message at a time in inbox order: resolve the conversation,
 * run (or resume) the turn, store the reply in the outbox, post what is not posted yet. Pending
 * messages of lanes nobody holds are found by polling, so a restart or a dead replica's lanes
 * carry on by themselves.
 */
export class InboundPipeline {
  private readonly platforms = new Map<string, { outbound: Outbound; access: Access }>();
  private readonly lanes = new Map<string, LaneWork>();
  private readonly waiters = new Map<string, (outcome: Answered) => void>();
  private readonly recording = new KeyedQueue();
  private timers: ReturnType<typeof setInterval>[] = [];
  private lastRenewal = Date.now();
  private draining = false;
  private readonly desk: ApprovalDesk;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly options: PipelineOptions,
  ) {
    this.desk = new ApprovalDesk({ approvals: deps.approvals, inbox: deps.inbox, mask: deps.mask }, { timeoutMs: options.approvalTimeoutMs, pollMs: options.pollMs });
  }

  register(platform: string, outbound: Outbound, access: Access = {}): void {
    this.platforms.set(platform, { outbound, access });
  }

  /** Throws NotRecordedError when the message cannot be stored; it was then not acknowledged. */
  async handleIncoming(unchecked: InboundMessage, options: HandleOptions = {}): Promise<Handled> {
    // Stored before anything else, so made storable first (NUL and lone surrogates; see wellFormed).
    const message = { ...unchecked, text: wellFormed(unchecked.text) };
    const { outbound } = this.platform(message.lane.platform);
    const refused = !this.permits(message);
    let entry: InboxEntry | undefined;
    try {
      // One lane's messages are stored in the order they arrived here: their inbox ids are their order.
      entry = await this.recording.run(JSON.stringify(message.lane), () => this.deps.inbox.record(message, refused));
    } catch (error) {
      // Not stored, so not acknowledged either: the platform (or the person) sends it again.
      this.deps.logger.error('Could not record an inbound message', { platform: message.lane.platform, error: errorText(error) });
      throw new NotRecordedError(`the message could not be stored: ${errorText(error)}`);
    }
    if (!entry) return { status: 'duplicate' };
    if (refused) {
      await outbound.refuse(message).catch((error: unknown) => this.deps.logger.warn('Could not send a refusal', { error: errorText(error) }));
      return { status: 'refused' };
    }
    await options.acknowledge?.().catch((error: unknown) => this.deps.logger.warn('Could not acknowledge a message', { error: errorText(error) }));
    const answered = options.waitForReply ? new Promise<Answered>((resolve) => this.waiters.set(entry.id, resolve)) : undefined;
    this.work(entry.laneId);
    return { status: 'accepted', answered };
  }

  /** search_history for a person, behind the same allow-lists as their messages; undefined when refused. */
  async recall(who: Pick<InboundMessage, 'lane' | 'user' | 'roles'>, query: string): Promise<HistoryHit[] | undefined> {
    if (!this.permits(who)) return undefined;
    return this.deps.search.searchHistory(who.lane, { text: query, maxResults: 10 });
  }

  /** A stored result in full for a person, behind the same allow-lists as their messages; 'refused' when they may not. */
  async result(who: Pick<InboundMessage, 'lane' | 'user' | 'roles'>, toolCallId: string): Promise<StoredResult | 'refused' | undefined> {
    if (!this.permits(who)) return 'refused';
    return this.deps.search.storedResult(who.lane, toolCallId);
  }

  /** Only an approver's click counts (the channel's approvers, else whoever may talk to Spool there), and only the first decision. */
  async decideApproval(click: ApprovalClick): Promise<ClickOutcome> {
    const { approvers } = policyFor(this.options.policy, click.lane);
    if (!(approvers ? approvers.includes(click.user) : this.permits(click))) return { status: 'not_allowed' };
    const decided = await this.desk.decide(click.lane, click.toolCallId, { status: click.approve ? 'approved' : 'denied', by: click.user });
    if (!decided) return { status: 'unknown' };
    return { status: decided.won ? 'decided' : 'already', state: decided.state };
  }

  /** Starts taking over lanes: at once (what an earlier run left pending), then every `pollMs`. */
  start(): void {
    const every = (ms: number, task: () => Promise<void>) => {
      const timer = setInterval(() => void task().catch((error: unknown) => this.deps.logger.warn('Delivery upkeep failed', { error: errorText(error) })), ms);
      timer.unref?.();
      return timer;
    };
    this.timers = [every(this.options.pollMs, () => this.poll()), every(Math.max(100, this.options.leaseMs / 3), () => this.heartbeat())];
    void this.poll().catch((error: unknown) => this.deps.logger.warn('Delivery upkeep failed', { error: errorText(error) }));
  }

  /**
   * Starts no new message, lets running turns finish for up to `graceMs`, then cuts the rest
   * short and releases every lease. What is unfinished stays pending for the next holder.
   */
  async stop(graceMs: number): Promise<void> {
    this.draining = true;
    clearInterval(this.timers[0]);
    const running = () => Promise.all([...this.lanes.values()].map((w) => w.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([running(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    for (const work of this.lanes.values()) work.abort.abort(new Error('shutting down'));
    await running();
    this.timers.forEach(clearInterval);
  }

  /** The platform's allow-lists, with the users or roles the channel's policy names in place of its own. */
  private permits(who: Pick<InboundMessage, 'lane' | 'user' | 'roles'>): boolean {
    const { users, roles } = policyFor(this.options.policy, who.lane);
    return permits({ ...this.platform(who.lane.platform).access, ...(users ? { users } : {}), ...(roles ? { roles } : {}) }, who);
  }

  /** The channel's own prompt, model, tools and approvals, as the turn takes them. */
  private turnPolicy(entry: InboxEntry, outbound: Outbound): TurnPolicy {
    const { systemPrompt, systemPromptAddition, model, tools, approve } = policyFor(this.options.policy, entry.lane);
    return {
      systemPrompt,
      systemPromptAddition,
      model,
      ...(tools ? { offersTool: (name: string) => toolAllowed(tools, name) } : {}),
      ...(approve ? { approval: this.desk.gate(entry, outbound, (name) => toolMatches(approve, name)) } : {}),
    };
  }

  private platform(name: string): { outbound: Outbound; access: Access } {
    const platform = this.platforms.get(name);
    if (!platform) throw new Error(`No outbound registered for platform "${name}"`);
    return platform;
  }

  private work(laneId: string): void {
    const running = this.lanes.get(laneId);
    if (running) return void (running.again = true);
    if (this.draining) return;
    const work: LaneWork = { held: false, again: false, abort: new AbortController(), done: Promise.resolve() };
    this.lanes.set(laneId, work);
    work.done = this.workLane(laneId, work)
      .catch((error: unknown) => this.deps.logger.error('Lane failed', { lane: laneId, error: errorText(error) }))
      .finally(() => {
        this.lanes.delete(laneId);
        if (work.again) this.work(laneId);
      });
  }

  private async workLane(laneId: string, work: LaneWork): Promise<void> {
    const { inbox } = this.deps;
    if (!(await inbox.acquire(laneId, this.options.holder, this.options.leaseMs))) return;
    work.held = true;
    try {
      while (!this.draining && !work.abort.signal.aborted) {
        work.again = false;
        const entry = await inbox.nextPending(laneId);
        if (!entry) {
          if (work.again) continue;
          break;
        }
        const fields = { platform: entry.lane.platform, inbox: entry.id };
        if (!(await withLogFields(this.deps.logger, fields, () => this.process(entry, work.abort.signal)))) break;
      }
    } finally {
      work.again &&= !this.draining;
      await inbox.release(laneId, this.options.holder);
    }
  }

  /** Answers one message; false when the lane must stop (a retry is due later, or the lease is gone). */
  private async process(entry: PendingEntry, signal: AbortSignal): Promise<boolean> {
    const { outbound } = this.platform(entry.lane.platform);
    const { inbox } = this.deps;
    try {
      // Shown on a resumed message too, so that whatever a crashed process showed is cleared.
      const endWorking = await outbound.showWorking(entry);
      let stored: ReplyChunk[];
      let chunks: ReplyChunk[] = [];
      // A reply stored by an earlier attempt came from a turn that ran to its end.
      let outcome: Answered = 'ok';
      try {
        stored = entry.replySaved ? await inbox.replyOf(entry.id) : [];
        if (stored.length > 0) chunks = stored;
        else {
          const reply = await this.reply(entry, outbound, signal);
          outcome = reply.outcome;
          chunks = await inbox.saveReply(entry.id, this.replyParts(entry, outbound, reply.text));
        }
      } finally {
        await endWorking(chunks.some((chunk) => !chunk.platformMessageId));
      }
      for (const chunk of chunks) {
        if (chunk.platformMessageId) continue;
        const outgoing = { inboxId: entry.id, seq: chunk.seq, text: chunk.text, ...(chunk.file ? { file: chunk.file } : {}) };
        // A chunk stored before this attempt may have been posted by a process that died before recording it.
        const found = stored.length > 0 ? await outbound.findPosted?.(entry, outgoing) : undefined;
        await inbox.markPosted(chunk.id, found ?? (await outbound.post(entry, outgoing)));
      }
      await inbox.finish(entry.id, 'answered');
      this.answered(entry, outcome);
      return true;
    } catch (error) {
      // Shutting down, or the lease was lost: the message stays pending for whoever holds the lane next.
      if (signal.aborted) return false;
      return this.failed(entry, outbound, error);
    }
  }

  /** The reply as the platform's messages, or, longer than a few of them, as one file with a message. */
  private replyParts(entry: InboxEntry, outbound: Outbound, text: string): ReplyPart[] {
    if (outbound.postsFiles && text.length > this.options.replyFileChars) return [replyAsFile(text, entry.id)];
    return outbound.render(text).map((part) => ({ text: part }));
  }

  private async reply(entry: PendingEntry, outbound: Outbound, signal: AbortSignal): Promise<{ text: string; outcome: Answered }> {
    if (entry.kind === 'new_conversation') {
      await this.deps.inbox.startConversation(entry);
      return { text: NEW_CONVERSATION_REPLY, outcome: 'ok' };
    }
    const { conversation, fresh } = entry.conversation ? { conversation: entry.conversation, fresh: false } : await this.deps.inbox.conversationFor(entry);
    const text = (fresh && (await outbound.threadContext?.(entry))) || entry.text;
    const notes: string[] = [];
    const files = entry.files?.length
      ? async () => {
          const read = await readSharedFiles(entry, outbound, this.deps.files, this.options.files, signal);
          notes.push(...read.notes);
          return read.files;
        }
      : undefined;
    const { reply, status } = await this.deps.agent.runTurn(conversation, text, { inboxId: entry.id, signal, files, policy: this.turnPolicy(entry, outbound) });
    // A turn cut short by shutdown is resumed later, not answered with its cancellation.
    signal.throwIfAborted();
    return { text: [reply, ...notes.map((note) => `_(${note})_`)].join('\n\n'), outcome: status === 'failed' ? 'failed' : 'ok' };
  }

  private async failed(entry: InboxEntry, outbound: Outbound, error: unknown): Promise<boolean> {
    const attempts = entry.attempts + 1;
    this.deps.logger.error('Could not answer a message', { platform: entry.lane.platform, inbox: entry.id, attempts, error: errorText(error) });
    try {
      if (attempts < this.options.maxAttempts) {
        await this.deps.inbox.retryLater(entry.id, 1_000 * 2 ** attempts);
        return false;
      }
      await outbound.post(entry, { seq: 0, text: FAILURE_REPLY }).catch(() => {});
      await this.deps.inbox.finish(entry.id, 'failed');
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

  private async poll(): Promise<void> {
    if (this.draining) return;
    for (const laneId of await this.deps.inbox.claimableLanes([...this.platforms.keys()], 100)) this.work(laneId);
  }

  /** Renews this process's leases; work on a lane whose lease is gone (or may be) stops at once. */
  private async heartbeat(): Promise<void> {
    if (this.lanes.size === 0) return void (this.lastRenewal = Date.now());
    let held: Set<string>;
    try {
      held = new Set(await this.deps.inbox.renew(this.options.holder, this.options.leaseMs));
      this.lastRenewal = Date.now();
    } catch (error) {
      if (Date.now() - this.lastRenewal < this.options.leaseMs) throw error;
      held = new Set();
    }
    for (const [laneId, work] of this.lanes) if (work.held && !held.has(laneId)) work.abort.abort(new Error('lease lost'));
  }
}
