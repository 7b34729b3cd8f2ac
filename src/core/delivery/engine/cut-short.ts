import type { AcquiredLease, InboxEntry } from '../../ports/platform/delivery.ts';
import type { RedoReason } from '../../ports/turns.ts';

/** How many messages whose attempt this process cut short it remembers, with why. */
const CUT_SHORT_KEPT = 1_000;

/** Messages whose attempt here was cut short, and why: said to the turn that resumes them. */
export class CutShort {
  private readonly reasons = new Map<string, RedoReason>();

  record(entry: InboxEntry, why: RedoReason): void {
    this.reasons.delete(entry.id);
    this.reasons.set(entry.id, why);
    if (this.reasons.size > CUT_SHORT_KEPT) this.reasons.delete(this.reasons.keys().next().value!);
  }

  /**
   * Why an earlier attempt at the message ended, for its turn to count what it starts again: as
   * this process cut it short, else as the lease was found: taken from a holder that stopped
   * renewing it (a crash), or released by one (a shutdown, or a failed attempt).
   */
  resumedAfter(entry: InboxEntry, lease: AcquiredLease): RedoReason {
    const here = this.reasons.get(entry.id);
    this.reasons.delete(entry.id);
    if (here) return here;
    if (lease.takenOver) return 'crash';
    return entry.attempts > 0 ? 'error' : 'shutdown';
  }
}
