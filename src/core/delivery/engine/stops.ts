import type { DeliveryPort, PendingEntry, StopKind } from '../../ports/platform/delivery.ts';
import type { Answered } from '../../ports/platform/platform.ts';
import { STOPPED_REPLY } from '../posts/replies.ts';

/** How often this process looks for Stops other replicas took for the turns it runs. */
const STOP_POLL_MS = 500;

/** What a turn ended by a person gives instead of its reply. */
export type Ended = { superseded: true } | { text: string; outcome: Answered; stopped: true };

/**
 * The turns this process runs, by inbox row: a Stop (or an edit that supersedes the message) taken
 * here ends one at once, one taken by another replica within STOP_POLL_MS.
 */
export class RunningTurns {
  private readonly running = new Map<string, AbortController>();
  private stopWatch?: NodeJS.Timeout;

  constructor(private readonly ledger: Pick<DeliveryPort, 'stopsAmong'>) {}

  /** Ends the turn of this inbox row, if it runs here. */
  abort(inboxId: string, why: StopKind): void {
    this.running.get(inboxId)?.abort(why);
  }

  /**
   * The turn's reply (`run`, under `signal` and the message's Stop), or STOPPED_REPLY once a person
   * stopped it: what the turn stored so far stays, for a later "go on".
   */
  async unlessStopped<T>(
    entry: PendingEntry,
    signal: AbortSignal,
    run: (signal: AbortSignal) => Promise<T>,
  ): Promise<T | Ended> {
    const ended = (why: StopKind): Ended =>
      why === 'superseded'
        ? ({ superseded: true } as const)
        : { text: STOPPED_REPLY, outcome: 'ok' as const, stopped: true as const };
    if (entry.stopped) return ended(entry.stopped);
    const stop = new AbortController();
    this.running.set(entry.id, stop);
    this.watchStops();
    try {
      return await run(AbortSignal.any([signal, stop.signal]));
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
      void this.ledger.stopsAmong([...this.running.keys()]).then(
        (stopped) => stopped.forEach((why, id) => this.running.get(id)?.abort(why)),
        // The database is away: the turn finds out on its own, and the next read tries again.
        () => {},
      );
    }, STOP_POLL_MS).unref();
  }
}
