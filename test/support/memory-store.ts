import type {
  ApprovalPort,
  ApprovalState,
  Decision,
} from '../../src/core/ports/parked/approvals.ts';
import type {
  ChannelScope,
  Conversation,
  ConversationKey,
  Message,
} from '../../src/core/ports/conversation.ts';
import type {
  AcquiredLease,
  ApprovalButtons,
  FormButtons,
  InboundMessage,
  LaneKey,
  InboxEntry,
  DeliveryPort,
  PendingEntry,
  ReplyChunk,
  ReplyPart,
  StopKind,
} from '../../src/core/ports/platform/delivery.ts';
import {
  LeaseLostError,
  type Lease,
  type StepRecords,
  type StorePort,
} from '../../src/core/ports/store.ts';
import type { FormAnswer, QuestionPort, QuestionState } from '../../src/core/ports/parked/forms.ts';

/**
 * The store port with nothing behind it but arrays: for fast tests of the loop, and the floor of
 * the overhead bench. `steps` keeps every write as it came, so a test sees what was stored when.
 */
export class MemoryStore implements StorePort {
  readonly steps: Array<{ conversation: string; messages: Message[]; records: StepRecords }> = [];
  private readonly transcripts = new Map<string, Message[]>();
  private readonly results = new Map<string, string>();
  /** Set to make every write fail, as a database that went away does. */
  failWrites = false;

  async openConversation(key: ConversationKey): Promise<Conversation> {
    return { id: JSON.stringify([key.platform, key.workspace, key.channel, key.thread]), ...key };
  }

  async loadTranscript(conversation: Conversation): Promise<Message[]> {
    return [...(this.transcripts.get(conversation.id) ?? [])];
  }

  async appendMessages(
    conversation: Conversation,
    messages: Message[],
    records: StepRecords = {},
  ): Promise<void> {
    if (this.failWrites) throw new Error('connection refused');
    this.steps.push({ conversation: conversation.id, messages, records });
    this.transcripts.set(conversation.id, [
      ...(this.transcripts.get(conversation.id) ?? []),
      ...messages,
    ]);
    for (const r of records.results ?? []) this.results.set(r.toolCallId, r.content);
  }

  async readToolResult(
    _conversation: Conversation,
    toolCallId: string,
  ): Promise<string | undefined> {
    return this.results.get(toolCallId);
  }
}

interface Row extends InboxEntry {
  status: 'pending' | 'waiting' | 'answered' | 'failed' | 'refused';
  availableAt: number;
  stoppedBy?: string;
  superseded?: boolean;
}

/**
 * The inbox port in memory, with the ledger's rules: one row per message, lanes in arrival order,
 * leases that run out.
 */
export class MemoryLedger implements DeliveryPort {
  readonly rows: Row[] = [];
  readonly chunks = new Map<string, ReplyChunk[]>();
  /** Approval prompts, by inbox row and call. */
  readonly prompts = new Map<string, ReplyChunk>();
  private readonly lanes = new Map<
    string,
    { id: string; holder?: string; until: number; generation: number; conversation?: Conversation }
  >();
  /** Set to make `record` fail, as a database that went away does. */
  failRecords = false;

  async record(message: InboundMessage, refused: boolean): Promise<InboxEntry | undefined> {
    if (this.failRecords) throw new Error('connection refused');
    const key = JSON.stringify(message.lane);
    if (
      this.rows.some(
        (r) => r.lane.platform === message.lane.platform && r.messageKey === message.messageKey,
      )
    )
      return undefined;
    if (message.knownLaneOnly && !this.lanes.has(key)) return undefined;
    if (!refused && !this.lanes.has(key))
      this.lanes.set(key, { id: String(this.lanes.size + 1), until: 0, generation: 0 });
    const row: Row = {
      ...message,
      id: String(this.rows.length + 1),
      laneId: refused ? '' : this.lanes.get(key)!.id,
      attempts: 0,
      status: refused ? 'refused' : 'pending',
      availableAt: 0,
    };
    this.rows.push(row);
    return row;
  }

  async claimableLanes(): Promise<string[]> {
    const pending = new Set(
      this.rows
        .filter(
          (r) => (r.status === 'pending' || r.status === 'waiting') && r.availableAt <= Date.now(),
        )
        .map((r) => r.laneId),
    );
    return [...this.lanes.values()]
      .filter((l) => pending.has(l.id) && (!l.holder || l.until < Date.now()))
      .map((l) => l.id);
  }

  async acquire(
    laneId: string,
    holder: string,
    leaseMs: number,
  ): Promise<AcquiredLease | undefined> {
    const lane = this.lane(laneId);
    if (lane.holder && lane.holder !== holder && lane.until >= Date.now()) return undefined;
    const takenOver = lane.holder !== undefined;
    Object.assign(lane, { holder, until: Date.now() + leaseMs, generation: lane.generation + 1 });
    return { laneId, generation: String(lane.generation), takenOver };
  }

  async renew(holder: string, leases: Lease[], leaseMs: number): Promise<Lease[]> {
    const held = leases.filter((l) => this.holds(l) && this.lane(l.laneId).holder === holder);
    held.forEach((l) => (this.lane(l.laneId).until = Date.now() + leaseMs));
    return held;
  }

  /** Whether `lease` is still its lane's (no later acquisition). */
  private holds(lease: Lease): boolean {
    return String(this.lane(lease.laneId).generation) === lease.generation;
  }

  private fenced(lease: Lease | undefined): void {
    if (lease && !this.holds(lease)) throw new LeaseLostError(`lane ${lease.laneId} taken over`);
  }

  /** As `extendLease`: the lease, when it is still its lane's, runs `leaseMs` from now at least. */
  private extended(lease: Lease, leaseMs: number): void {
    this.fenced(lease);
    const lane = this.lane(lease.laneId);
    lane.until = Math.max(lane.until, Date.now() + leaseMs);
  }

  async claimPost(chunkId: string, lease: Lease, leaseMs: number): Promise<boolean> {
    this.extended(lease, leaseMs);
    return !this.chunk(chunkId)?.platformMessageId;
  }

  async release(laneId: string, holder: string): Promise<void> {
    const lane = this.lane(laneId);
    if (lane.holder === holder) Object.assign(lane, { holder: undefined, until: 0 });
  }

  async nextPending(laneId: string, holder?: string): Promise<PendingEntry | undefined> {
    const next = this.rows.find(
      (r) => r.laneId === laneId && (r.status === 'pending' || r.status === 'waiting'),
    );
    if (!next || next.availableAt > Date.now()) {
      if (holder) await this.release(laneId, holder);
      return undefined;
    }
    const { conversation } = this.lane(laneId);
    return {
      ...next,
      ...(conversation ? { conversation: { ...conversation } } : {}),
      replySaved: this.chunks.has(next.id),
      ...(next.stoppedBy ? { stopped: next.superseded ? 'superseded' : 'stop' } : {}),
    };
  }

  async conversationFor(
    entry: InboxEntry,
  ): Promise<{ conversation: Conversation; fresh: boolean; created: boolean }> {
    const lane = this.lane(entry.laneId);
    if (lane.conversation) return { conversation: lane.conversation, fresh: false, created: false };
    lane.conversation = { id: `conversation-${entry.laneId}`, ...entry.lane };
    return { conversation: lane.conversation, fresh: true, created: true };
  }

  async startConversation(entry: InboxEntry): Promise<void> {
    this.lane(entry.laneId).conversation = {
      id: `conversation-${entry.laneId}-${entry.messageKey}`,
      ...entry.lane,
      thread: `new-${entry.messageKey}`,
    };
  }

  async replyOf(inboxId: string): Promise<ReplyChunk[]> {
    return (this.chunks.get(inboxId) ?? []).map((c) => ({ ...c }));
  }

  async saveReply(
    inboxId: string,
    parts: ReplyPart[],
    lease?: Lease,
    leaseMs = 0,
  ): Promise<ReplyChunk[]> {
    if (lease) this.extended(lease, leaseMs);
    if (this.rows.find((r) => r.id === inboxId)?.superseded) return [];
    if (!this.chunks.has(inboxId))
      this.chunks.set(
        inboxId,
        parts.map((part, seq) => ({ ...part, id: `${inboxId}.${seq}`, seq })),
      );
    return this.replyOf(inboxId);
  }

  async savePrompt(
    inboxId: string,
    prompt: { text: string } & ({ approval: ApprovalButtons } | { form: FormButtons }),
  ): Promise<ReplyChunk> {
    const key = `${inboxId}:${'approval' in prompt ? prompt.approval.toolCallId : prompt.form.questionId}`;
    if (!this.prompts.has(key))
      this.prompts.set(key, {
        ...prompt,
        id: `prompt-${key}`,
        seq: -1 - [...this.prompts.keys()].filter((k) => k.startsWith(`${inboxId}:`)).length,
      });
    return { ...this.prompts.get(key)! };
  }

  async replaceFile(inboxId: string, chunkId: string, parts: ReplyPart[]): Promise<ReplyChunk[]> {
    const chunks = this.chunks.get(inboxId) ?? [];
    const at = chunks.findIndex((c) => c.id === chunkId && c.file);
    if (at >= 0) {
      const { id, seq, links } = chunks[at]!;
      // The first takes the file's row, its links with it.
      chunks.splice(
        at,
        1,
        ...parts.map((part, i) => ({
          text: part.text,
          id: i === 0 ? id : `${inboxId}.${seq + i}`,
          seq: seq + i,
          ...(i === 0 && links ? { links } : {}),
        })),
      );
    }
    return this.replyOf(inboxId);
  }

  private chunk(chunkId: string): ReplyChunk | undefined {
    return [...this.chunks.values(), [...this.prompts.values()]]
      .flat()
      .find((c) => c.id === chunkId);
  }

  async markPosted(
    chunkId: string,
    platformMessageId: string,
    answered?: { inboxId: string; lease: Lease },
  ): Promise<boolean> {
    this.chunk(chunkId)!.platformMessageId = platformMessageId;
    if (answered) await this.finish(answered.inboxId, 'answered', answered.lease);
    // The lane is released by nextPending, finding nothing.
    return false;
  }

  async finish(inboxId: string, status: 'answered' | 'failed', lease?: Lease): Promise<void> {
    this.fenced(lease);
    this.row(inboxId).status = status;
  }

  async retryLater(inboxId: string, delayMs: number): Promise<void> {
    const row = this.row(inboxId);
    row.attempts++;
    row.availableAt = Date.now() + delayMs;
  }

  async awaitDecision(inboxId: string, until: Date): Promise<void> {
    const row = this.row(inboxId);
    if (row.stoppedBy) return;
    row.status = 'waiting';
    row.availableAt = until.getTime();
  }

  async wake(toolCallId: string): Promise<string | undefined> {
    const prompt = [...this.prompts.entries()].find(([key]) => key.endsWith(`:${toolCallId}`));
    const row = prompt && this.row(prompt[0].split(':')[0]!);
    if (row?.status !== 'waiting') return undefined;
    row.status = 'pending';
    row.availableAt = Date.now();
    return row.laneId;
  }

  async requestStop(lane: LaneKey, by: string, messageKey?: string) {
    const row = this.rows.find(
      (r) =>
        JSON.stringify(r.lane) === JSON.stringify(lane) &&
        (r.status === 'pending' || r.status === 'waiting') &&
        !this.chunks.has(r.id) &&
        (!messageKey || r.messageKey === messageKey),
    );
    if (!row) return undefined;
    row.stoppedBy ??= by;
    row.status = 'pending';
    row.availableAt = Math.min(row.availableAt, Date.now());
    return { inboxId: row.id, laneId: row.laneId };
  }

  async stopsAmong(inboxIds: string[]): Promise<Map<string, StopKind>> {
    const stopped = this.rows.filter((r) => inboxIds.includes(r.id) && r.stoppedBy);
    return new Map(stopped.map((r) => [r.id, r.superseded ? 'superseded' : 'stop']));
  }

  async supersede(inboxId: string, by: string): Promise<string | undefined> {
    const row = this.row(inboxId);
    if ((row.status !== 'pending' && row.status !== 'waiting') || this.chunks.has(row.id))
      return undefined;
    Object.assign(row, { stoppedBy: row.stoppedBy ?? by, superseded: true, status: 'pending' });
    row.availableAt = Math.min(row.availableAt, Date.now());
    return row.laneId;
  }

  async supersedeWorkspace(place: { platform: string; workspace: string }, by: string) {
    const open = this.rows.filter(
      (r) => r.lane.platform === place.platform && r.lane.workspace === place.workspace,
    );
    const ended = await Promise.all(
      open.map(async (r) => ({ r, laneId: await this.supersede(r.id, by) })),
    );
    return ended.flatMap(({ r, laneId }) => (laneId ? [{ inboxId: r.id, laneId }] : []));
  }

  async findMessage(platform: string, messageKey: string) {
    const root = this.rows.find((r) => r.lane.platform === platform && r.messageKey === messageKey);
    if (!root?.laneId) return undefined;
    const edited = (r: Row) => r.delivery.original === root.id;
    const row = this.rows.filter((r) => r === root || edited(r)).at(-1)!;
    const latest = !this.rows.some(
      (r) =>
        r.laneId === root.laneId &&
        r.status === 'answered' &&
        Number(r.delivery.original ?? r.id) > Number(root.id),
    );
    return { entry: { ...row }, status: row.status, latest };
  }

  async promptsOf(inboxId: string): Promise<ReplyChunk[]> {
    return [...this.prompts]
      .filter(([key, prompt]) => key.startsWith(`${inboxId}:`) && prompt.approval)
      .map(([, prompt]) => ({ ...prompt }));
  }

  private lane(id: string) {
    return [...this.lanes.values()].find((l) => l.id === id)!;
  }

  private row(id: string): Row {
    return this.rows.find((r) => r.id === id)!;
  }
}

/**
 * The approval port in memory, with the ledger's rules: the first decision wins, expiry only once
 * due, an approved call starts once.
 */
export class MemoryApprovals implements ApprovalPort {
  readonly calls = new Map<string, ApprovalState>();
  async request(
    _scope: ChannelScope,
    toolCallId: string,
    timeoutMs: number,
  ): Promise<ApprovalState> {
    if (!this.calls.has(toolCallId))
      this.calls.set(toolCallId, {
        status: 'pending',
        requestedAt: new Date(),
        expiresAt: new Date(Date.now() + timeoutMs),
        started: false,
      });
    return { ...this.calls.get(toolCallId)! };
  }

  async state(_scope: ChannelScope, toolCallId: string): Promise<ApprovalState | undefined> {
    const state = this.calls.get(toolCallId);
    return state && { ...state };
  }

  async decide(
    _scope: ChannelScope,
    toolCallId: string,
    decision: Decision,
  ): Promise<{ won: boolean; state: ApprovalState } | undefined> {
    const state = this.calls.get(toolCallId);
    if (!state) return undefined;
    const won =
      state.status === 'pending' &&
      (decision.status !== 'expired' || state.expiresAt.getTime() <= Date.now());
    if (won) Object.assign(state, { ...decision, at: new Date() });
    return { won, state: { ...state } };
  }

  async waiting(_scope: ChannelScope, toolCallIds: string[]): Promise<Set<string>> {
    return new Set(toolCallIds.filter((id) => this.calls.get(id)?.started === false));
  }

  async start(_scope: ChannelScope, toolCallId: string): Promise<boolean> {
    const state = this.calls.get(toolCallId);
    if (state?.status !== 'approved' || state.started) return false;
    state.started = true;
    return true;
  }
}

export class MemoryQuestions implements QuestionPort {
  readonly asked = new Map<string, QuestionState>();

  async open(question: Omit<QuestionState, 'status' | 'expiresAt'>, timeoutMs: number) {
    const expiresAt = new Date(Date.now() + timeoutMs);
    this.asked.set(question.id, { ...question, status: 'open', expiresAt });
    return expiresAt;
  }

  async state(id: string): Promise<QuestionState | undefined> {
    const state = this.asked.get(id);
    return state && { ...state };
  }

  async answer(id: string, answer: FormAnswer | { action: 'expired' }, by?: string) {
    const state = this.asked.get(id);
    if (!state) return undefined;
    const won =
      state.status === 'open' &&
      (answer.action !== 'expired' || state.expiresAt.getTime() <= Date.now());
    if (won)
      Object.assign(state, {
        status: answer.action,
        ...('content' in answer ? { content: answer.content } : {}),
        ...(by ? { by } : {}),
      });
    return { won, state: { ...state } };
  }
}
