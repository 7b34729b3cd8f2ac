import type { DeliveryPort, InboxEntry } from '../ports/delivery.ts';
import type { Outbound } from '../ports/platform.ts';
import type { PendingCall } from '../ports/turns.ts';
import type { ApprovalDesk } from './approvals.ts';
import { policyFor, type Policy } from './policy.ts';
import { waitingForApproval } from './status.ts';

export interface ParkingDeps {
  ledger: Pick<DeliveryPort, 'awaitDecision' | 'wake'>;
  desk: ApprovalDesk;
  policy: Policy | undefined;
  /** Works the lane here, if this process can take it. */
  work(laneId: string): void;
}

/**
 * Messages whose turn stopped at calls awaiting a decision: parked until a click wakes them or
 * their deadline comes.
 */
export class Parking {
  constructor(private readonly deps: ParkingDeps) {}

  /**
   * A turn stopped at calls awaiting a decision: their prompts are posted, and the message waits,
   * holding the lane's later messages back, until a click wakes it or its deadline comes (found
   * by the poll of whichever replica runs). No lease is held and nothing polls for it meanwhile.
   */
  async park(entry: InboxEntry, outbound: Outbound, calls: PendingCall[]): Promise<boolean> {
    const { desk, ledger } = this.deps;
    const due = await desk.prompt(entry, outbound, calls);
    // Until the turn is taken up again (its working indicator replaces this), after the prompts: a
    // message posted in the thread clears a Slack status.
    const { approvers } = policyFor(this.deps.policy, entry.lane);
    const waiting = waitingForApproval(
      calls.map((call) => call.name),
      approvers,
      entry.lane.platform,
    );
    await outbound.showStatus?.(entry, waiting).catch(() => {});
    await ledger.awaitDecision(entry.id, due);
    // A click between the prompt and the line above found nothing waiting to wake.
    if (await desk.anyDecided(entry.lane, calls)) await ledger.wake(calls[0]!.id);
    return true;
  }

  /**
   * Lets a message that awaits the decision on this call go on, here if this process can take its
   * lane.
   */
  async wake(toolCallId: string): Promise<void> {
    const laneId = await this.deps.ledger.wake(toolCallId);
    if (laneId) this.deps.work(laneId);
  }
}
