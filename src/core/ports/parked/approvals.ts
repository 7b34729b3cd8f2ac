import type { ChannelScope } from '../conversation.ts';

/** The approval port: decisions on calls that wait for a person, kept on the calls' rows. */

export type ApprovalDecision = 'approved' | 'denied' | 'expired';

/** Where one call's approval stands. */
export interface ApprovalState {
  status: 'pending' | ApprovalDecision;
  /** Past this, a pending call is expired by whoever looks (on the database's clock). */
  expiresAt: Date;
  /** When it was first put to people; unknown for a call asked about before this was kept. */
  requestedAt?: Date;
  /** Who decided; none for a timeout. */
  by?: string;
  at?: Date;
  /** Why, where that says more than the decision (no terminal to ask on). */
  note?: string;
  /** An approved call has started: it never starts again. */
  started: boolean;
}

/** One decision, as made by a click, a prompt or the clock. */
export interface Decision {
  status: ApprovalDecision;
  by?: string;
  note?: string;
}

/**
 * What a click came to: `decided` when it was the first decision, `already` when one came before
 * it.
 */
export type ClickOutcome =
  { status: 'decided' | 'already'; state: ApprovalState } | { status: 'not_allowed' | 'unknown' };

export interface ApprovalPort {
  /**
   * Marks the stored call as waiting for a decision, once: the first ask sets its deadline, and a
   * later one (a resumed turn) reads where it stands.
   */
  request(scope: ChannelScope, toolCallId: string, timeoutMs: number): Promise<ApprovalState>;
  state(scope: ChannelScope, toolCallId: string): Promise<ApprovalState | undefined>;
  /**
   * Records the decision if the call is still pending (an expiry, only once it is due): the first
   * decision wins. `won` says whether this one did; undefined when no such call waits in the
   * channel.
   */
  decide(
    scope: ChannelScope,
    toolCallId: string,
    decision: Decision,
  ): Promise<{ won: boolean; state: ApprovalState } | undefined>;
  /** Among these calls, those put to people (or to a sign-in) and not started since. */
  waiting(scope: ChannelScope, toolCallIds: string[]): Promise<Set<string>>;
  /** Marks an approved call as started; false when it already was (a run before a crash). */
  start(scope: ChannelScope, toolCallId: string): Promise<boolean>;
}
