import type { DeliveryPort, InboxEntry } from '../../ports/platform/delivery.ts';
import type { Outbound } from '../../ports/platform/platform.ts';
import type { PendingCall } from '../../ports/turns.ts';
import type { ApprovalDesk } from './approvals.ts';
import { policyFor, type Policy } from '../rules/policy.ts';
import { person } from '../posts/approval-text.ts';
import { signInRequest } from './sign-in-gate.ts';
import { waitingForApproval, waitingForSignIn, waitingForTask } from '../posts/status.ts';

export interface ParkingDeps {
  ledger: Pick<DeliveryPort, 'awaitDecision' | 'wake'>;
  desk: ApprovalDesk;
  policy: Policy | undefined;
  /** Works the lane here, if this process can take it. */
  work(laneId: string): void;
  /** Where the platform drops a status (`statusLapses`), how soon a parked turn shows it again. */
  statusRefreshMs: number;
}

/**
 * Messages whose turn stopped at calls awaiting a decision: parked until a click wakes them or
 * their deadline comes.
 */
export class Parking {
  constructor(private readonly deps: ParkingDeps) {}

  /**
   * A turn stopped at calls awaiting a decision, or at calls that parked (a task its server runs):
   * the prompts are posted, and the message waits, holding the lane's later messages back, until a
   * click wakes it or the earliest of its deadlines and tasks' next looks comes (found by the poll
   * of whichever replica runs). No lease is held and nothing polls for it meanwhile.
   */
  async park(entry: InboxEntry, outbound: Outbound, calls: PendingCall[]): Promise<boolean> {
    const { desk, ledger } = this.deps;
    const asked = calls.filter((call) => !call.parked);
    const dues = calls.flatMap((call) => (call.parked ? [call.parked.until.getTime()] : []));
    if (asked.length > 0) dues.push((await desk.prompt(entry, outbound, asked)).getTime());
    // Where the platform drops a status by itself, the message comes up again before it does:
    // still undecided, its turn parks again (no model request), and the status is shown anew.
    if (outbound.statusLapses) dues.push(Date.now() + this.deps.statusRefreshMs);
    // Until the turn is taken up again (its working indicator replaces this), after the prompts: a
    // message posted in the thread clears a Slack status.
    await outbound.showStatus?.(entry, this.waiting(entry, calls, asked)).catch(() => {});
    await ledger.awaitDecision(entry.id, new Date(Math.min(...dues)));
    // Only once the message waits: a sign-in landing any sooner would find nothing to wake.
    for (const { parked } of calls)
      if (parked?.signIn) {
        const { server, url, reason } = parked.signIn;
        const text = signInRequest(server, reason, parked.until.getTime() - Date.now());
        await outbound
          .showPrivately?.(entry, text, { label: `Sign in to ${server}`, url })
          .catch(() => {});
      }
    // A click between the prompt and the line above found nothing waiting to wake.
    if (asked.length > 0 && (await desk.anyDecided(entry.lane, asked)))
      await ledger.wake(asked[0]!.id);
    return true;
  }

  /** What the thread reads while the message waits: the approvals first, else the first task. */
  private waiting(entry: InboxEntry, calls: PendingCall[], asked: PendingCall[]): string {
    if (asked.length === 0) {
      const [{ name, parked }] = calls as [PendingCall];
      return parked?.signIn
        ? waitingForSignIn(person(entry.lane.platform, entry.user), parked.signIn.server)
        : waitingForTask(name, parked?.status);
    }
    const { approvers } = policyFor(this.deps.policy, entry.lane);
    const names = asked.map((call) => call.name);
    return waitingForApproval(names, approvers, entry.lane.platform);
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
