import type { ApprovalPort, ApprovalState, Decision } from '../ports/approvals.ts';
import type { ChannelScope } from '../ports/conversation.ts';
import type { InboxEntry, InboxPort, Outbound, ReplyChunk } from '../ports/inbox.ts';
import type { ApprovalAnswer, ApprovalGate, PendingCall } from '../ports/turns.ts';
import { approvalPrompt, decidedPrompt, refusalReason } from './approval-text.ts';

export interface ApprovalOptions {
  /** A call nobody decides on is denied after this long. */
  timeoutMs: number;
  /** How often a waiting turn looks for a decision made on another replica. */
  pollMs: number;
}

export interface ApprovalDeps {
  approvals: ApprovalPort;
  inbox: InboxPort;
  /** Masks the bot's own secrets in the arguments a prompt shows. */
  mask?: (text: string) => string;
}

/**
 * Asks before a call runs, and waits for the answer. The prompt is an outbox row of the message
 * whose turn asked, so it is posted once; the decision is on the call's row, so a click may reach
 * any replica and a restart waits on. A decision made in this process wakes its waiter at once.
 */
export class ApprovalDesk {
  private readonly wakers = new Map<string, () => void>();

  constructor(
    private readonly deps: ApprovalDeps,
    private readonly options: ApprovalOptions,
  ) {}

  /** The gate of one turn: `needs` says which tools ask. */
  gate(entry: InboxEntry, outbound: Outbound, needs: (toolName: string) => boolean): ApprovalGate {
    return { needs, wait: (call, signal) => this.wait(entry, outbound, call, signal) };
  }

  /** Records a decision (the first one wins) and wakes a turn of this process that waits for it. */
  async decide(scope: ChannelScope, toolCallId: string, decision: Decision): Promise<{ won: boolean; state: ApprovalState } | undefined> {
    const decided = await this.deps.approvals.decide(scope, toolCallId, decision);
    if (decided?.won) this.wakers.get(toolCallId)?.();
    return decided;
  }

  private async wait(entry: InboxEntry, outbound: Outbound, call: PendingCall, signal: AbortSignal): Promise<ApprovalAnswer> {
    const { approvals } = this.deps;
    const scope = entry.lane;
    let state = await approvals.request(scope, call.id, this.options.timeoutMs);
    if (outbound.askApproval) {
      if (state.status === 'pending') {
        const answer = await outbound.askApproval(entry, approvalPrompt(call, this.deps.mask));
        state = (await this.decide(scope, call.id, { status: answer.approved ? 'approved' : 'denied', by: entry.user, ...(answer.note ? { note: answer.note } : {}) }))!.state;
      }
    } else {
      // A call decided while no process waited (a click during a restart) has its prompt edited too.
      const prompt = await this.promptOf(entry, outbound, call, state.status === 'pending');
      state = await this.decision(scope, call.id, state, signal);
      if (prompt.platformMessageId) await outbound.edit?.(entry, prompt.platformMessageId, { inboxId: entry.id, seq: prompt.seq, text: decidedPrompt(call, state, scope.platform) });
    }
    if (state.status !== 'approved') return { approved: false, reason: refusalReason(state, scope.platform, this.options.timeoutMs) };
    if (await approvals.start(scope, call.id)) return { approved: true };
    return { approved: false, reason: refusalReason({ ...state, started: true }, scope.platform, this.options.timeoutMs) };
  }

  /**
   * The call's prompt, posted once (when `post`): one a crashed process posted without recording
   * it is found where the platform can tell.
   */
  private async promptOf(entry: InboxEntry, outbound: Outbound, call: PendingCall, post: boolean): Promise<ReplyChunk> {
    const { inbox } = this.deps;
    const chunk = await inbox.savePrompt(entry.id, { text: approvalPrompt(call, this.deps.mask), approval: { toolCallId: call.id } });
    if (chunk.platformMessageId) return chunk;
    const outgoing = { inboxId: entry.id, seq: chunk.seq, text: chunk.text, approval: chunk.approval };
    const platformMessageId = (await outbound.findPosted?.(entry, outgoing)) ?? (post ? await outbound.post(entry, outgoing) : undefined);
    if (!platformMessageId) return chunk;
    await inbox.markPosted(chunk.id, platformMessageId);
    return { ...chunk, platformMessageId };
  }

  /** Waits until the call is decided; past its deadline, expires it (unless a decision wins the race). */
  private async decision(scope: ChannelScope, toolCallId: string, state: ApprovalState, signal: AbortSignal): Promise<ApprovalState> {
    while (state.status === 'pending') {
      signal.throwIfAborted();
      const dueInMs = state.expiresAt.getTime() - Date.now();
      if (dueInMs <= 0) {
        const expired = await this.decide(scope, toolCallId, { status: 'expired' });
        if (expired?.state.status !== 'pending') return expired!.state;
      }
      await this.nap(toolCallId, Math.max(50, Math.min(this.options.pollMs, dueInMs)), signal);
      state = (await this.deps.approvals.state(scope, toolCallId)) ?? state;
    }
    return state;
  }

  private nap(toolCallId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakers.delete(toolCallId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.wakers.set(toolCallId, done);
    });
  }
}
