import type {
  ApprovalPort,
  ApprovalState,
  ClickOutcome,
  Decision,
} from '../../ports/parked/approvals.ts';
import type { ChannelScope } from '../../ports/conversation.ts';
import type { InboxEntry, DeliveryPort, ReplyChunk } from '../../ports/platform/delivery.ts';
import type { ApprovalClick, Outbound } from '../../ports/platform/platform.ts';
import type { ApprovalAnswer, ApprovalGate, PendingCall } from '../../ports/turns.ts';
import { approvalPrompt, decidedPrompt, refusalReason } from '../posts/approval-text.ts';

export interface ApprovalDeps {
  approvals: ApprovalPort;
  ledger: DeliveryPort;
  /** Masks the bot's own secrets in the arguments a prompt shows. */
  mask?: (text: string) => string;
}

/**
 * Approvals without waiting: a turn that reaches a call needing one stops there (the gate says
 * `pending`), the call's prompt is posted, and the turn runs again once the call is decided or
 * its time is up. The decision is on the call's row, so a click may reach any replica, and the
 * prompt is an outbox row of the message whose turn asked, so it is posted once.
 */
export class ApprovalDesk {
  constructor(
    private readonly deps: ApprovalDeps,
    private readonly options: { timeoutMs: number },
  ) {}

  /** The gate of one turn: `needs` says which tools ask. */
  gate(entry: InboxEntry, outbound: Outbound, needs: (toolName: string) => boolean): ApprovalGate {
    return { needs, decision: (call) => this.decision(entry, outbound, call) };
  }

  /** Records a decision: the first one wins. */
  decide(
    scope: ChannelScope,
    toolCallId: string,
    decision: Decision,
  ): Promise<{ won: boolean; state: ApprovalState } | undefined> {
    return this.deps.approvals.decide(scope, toolCallId, decision);
  }

  /**
   * A click on a prompt's button, by someone who may decide or not: `decided` when it was the first
   * decision.
   */
  async click(click: ApprovalClick, mayDecide: boolean): Promise<ClickOutcome> {
    if (!mayDecide) return { status: 'not_allowed' };
    const decided = await this.decide(click.lane, click.toolCallId, {
      status: click.approve ? 'approved' : 'denied',
      by: click.user,
    });
    if (!decided) return { status: 'unknown' };
    return { status: decided.won ? 'decided' : 'already', state: decided.state };
  }

  /**
   * Puts the calls a turn stopped at before a person: a prompt each, posted once. Resolves with
   * when the turn must run again if nobody decides: the earliest deadline.
   */
  async prompt(entry: InboxEntry, outbound: Outbound, calls: PendingCall[]): Promise<Date> {
    const deadlines = await Promise.all(
      calls.map(async (call) => {
        await this.promptOf(entry, outbound, call, true);
        return (
          await this.deps.approvals.request(entry.lane, call.id, this.options.timeoutMs)
        ).expiresAt.getTime();
      }),
    );
    return new Date(Math.min(...deadlines));
  }

  /** Asks the person at hand now, where the platform can (the console), and records the answers. */
  async ask(
    entry: InboxEntry,
    outbound: Required<Pick<Outbound, 'askApproval'>>,
    calls: PendingCall[],
  ): Promise<void> {
    for (const call of calls) {
      const answer = await outbound.askApproval(entry, approvalPrompt(call, this.deps.mask));
      await this.decide(entry.lane, call.id, {
        status: answer.approved ? 'approved' : 'denied',
        by: entry.user,
        ...(answer.note ? { note: answer.note } : {}),
      });
    }
  }

  /**
   * Whether any of the calls is decided already (a click that came before the turn was set to
   * wait).
   */
  async anyDecided(scope: ChannelScope, calls: PendingCall[]): Promise<boolean> {
    const states = await Promise.all(
      calls.map((call) => this.deps.approvals.state(scope, call.id)),
    );
    return states.some((state) => state && state.status !== 'pending');
  }

  /**
   * Where the call stands; past its deadline it is expired now. Once decided, its prompt says so.
   */
  private async decision(
    entry: InboxEntry,
    outbound: Outbound,
    call: PendingCall,
  ): Promise<ApprovalAnswer | 'pending'> {
    const { approvals } = this.deps;
    const scope = entry.lane;
    let state = await approvals.request(scope, call.id, this.options.timeoutMs);
    // Only a due call expires (on the database's clock): otherwise this changes nothing.
    if (state.status === 'pending')
      state = (await this.decide(scope, call.id, { status: 'expired' }))?.state ?? state;
    if (state.status === 'pending') return 'pending';
    // A call decided while no process was at work (a click during a restart) has its prompt edited
    // too.
    const prompt = outbound.edit && (await this.promptOf(entry, outbound, call, false));
    if (prompt?.platformMessageId)
      await outbound.edit!(entry, prompt.platformMessageId, {
        inboxId: entry.id,
        seq: prompt.seq,
        text: decidedPrompt(call, state, scope.platform),
      });
    if (state.status !== 'approved')
      return {
        approved: false,
        reason: refusalReason(state, scope.platform, this.options.timeoutMs),
      };
    if (await approvals.start(scope, call.id)) return { approved: true };
    return {
      approved: false,
      reason: refusalReason({ ...state, started: true }, scope.platform, this.options.timeoutMs),
    };
  }

  /**
   * The call's prompt, posted once (when `post`): one a crashed process posted without recording
   * it is found where the platform can tell.
   */
  private async promptOf(
    entry: InboxEntry,
    outbound: Outbound,
    call: PendingCall,
    post: boolean,
  ): Promise<ReplyChunk> {
    const { ledger } = this.deps;
    const chunk = await ledger.savePrompt(entry.id, {
      text: approvalPrompt(call, this.deps.mask),
      approval: { toolCallId: call.id },
    });
    if (chunk.platformMessageId) return chunk;
    const outgoing = {
      inboxId: entry.id,
      seq: chunk.seq,
      text: chunk.text,
      approval: chunk.approval,
    };
    const platformMessageId =
      (await outbound.findPosted?.(entry, outgoing)) ??
      (post ? await outbound.post(entry, outgoing) : undefined);
    if (!platformMessageId) return chunk;
    await ledger.markPosted(chunk.id, platformMessageId);
    return { ...chunk, platformMessageId };
  }
}
