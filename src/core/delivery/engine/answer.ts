import type {
  AcquiredLease,
  DeliveryPort,
  InboxEntry,
  PendingEntry,
  ReplyChunk,
} from '../../ports/platform/delivery.ts';
import type { Answered, Outbound } from '../../ports/platform/platform.ts';
import { LeaseLostError, type Lease } from '../../ports/store.ts';
import type { PendingCall } from '../../ports/turns.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { CutShort } from './cut-short.ts';
import { WorkCut } from './lanes.ts';
import type { Outbox } from '../posts/outbox.ts';
import type { Parking } from '../waiting/parking.ts';
import type { Platforms } from '../rules/platforms.ts';
import { editedReply } from '../posts/edits.ts';
import { FAILURE_REPLY } from '../posts/replies.ts';
import { StatusLine } from '../posts/status.ts';
import type { RunningTurns } from './stops.ts';
import type { TurnReply } from './turn.ts';

export interface AnswerDeps {
  ledger: Pick<DeliveryPort, 'replyOf' | 'finish' | 'retryLater'>;
  logger: Logger;
  platforms: Platforms;
  outbox: Outbox;
  running: RunningTurns;
  cutShort: CutShort;
  parking: Parking;
  /** The message's turn and its reply, under `signal` (see turn.ts). */
  reply(
    entry: PendingEntry,
    outbound: Outbound,
    run: { signal: AbortSignal; lease: AcquiredLease; status?: StatusLine },
  ): Promise<TurnReply>;
  /**
   * A turn a person stopped (or an edit ended): the approval prompts it left are closed (see
   * stopped-prompts.ts).
   */
  stopped(entry: InboxEntry, outbound: Outbound): Promise<void>;
  /** Told once a reply (or the failure reply) is delivered. */
  answered(entry: InboxEntry, outcome: Answered): void;
  /**
   * Tries at answering one message, when the database or the platform fails, before a failure
   * reply.
   */
  maxAttempts: number;
  /** A status is shown again this often, before the platform drops it (STATUS_REFRESH_MS). */
  statusRefreshMs: number;
}

/** Answering one message: its turn, its reply stored and posted, or the failure reply. */
export class Answerer {
  constructor(private readonly deps: AnswerDeps) {}

  /**
   * Answers one message; false when the lane must stop (a retry is due later, or the lease is
   * gone), 'released' when its last post released the lane, nothing else waiting. Its turn's steps,
   * its reply, each post and its end carry `lease`, and are refused once another holder took the
   * lane (LeaseLostError): then nothing more of it is written or posted.
   */
  async answer(
    entry: PendingEntry,
    signal: AbortSignal,
    lease: AcquiredLease,
  ): Promise<boolean | 'released'> {
    const { outbound } = this.deps.platforms.get(entry.lane.platform);
    const { ledger } = this.deps;
    try {
      // Shown on a resumed message too, so that whatever a crashed process showed is cleared.
      const endWorking = await outbound.showWorking(entry);
      const status = outbound.showStatus
        ? new StatusLine((text) => outbound.showStatus!(entry, text), {
            // At most once a second.
            intervalMs: 1_000,
            refreshMs: this.deps.statusRefreshMs,
          })
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
          const reply = await this.deps.running.unlessStopped(entry, signal, (both) =>
            this.deps.reply(entry, outbound, { signal: both, lease, status }),
          );
          if ('awaiting' in reply) awaiting = reply.awaiting;
          // An edit or a deletion ended the turn: its approval prompts are closed as a Stop's are.
          else if ('superseded' in reply) await this.deps.stopped(entry, outbound);
          else {
            outcome = reply.outcome;
            if ('stopped' in reply) await this.deps.stopped(entry, outbound);
            const text = 'stopped' in reply ? reply.text : editedReply(entry, reply.text);
            const links = 'stopped' in reply ? undefined : reply.links;
            chunks = await this.deps.outbox.save(entry, outbound, text, links, lease);
          }
        }
      } finally {
        status?.stop();
        await endWorking(chunks.some((chunk) => !chunk.platformMessageId));
      }
      if (awaiting.length > 0) return await this.deps.parking.park(entry, outbound, awaiting);
      const ended = await this.deps.outbox.deliver(
        entry,
        outbound,
        chunks,
        stored.length > 0,
        lease,
      );
      if (!ended) await ledger.finish(entry.id, 'answered', lease);
      this.deps.answered(entry, outcome);
      return ended === 'released' ? ended : true;
    } catch (error) {
      return this.cutShortOrFailed(entry, outbound, error, signal, lease);
    }
  }

  /**
   * Shutting down, or the lease was lost: the message stays pending for whoever holds the lane
   * next. Else the attempt failed.
   */
  private cutShortOrFailed(
    entry: InboxEntry,
    outbound: Outbound,
    error: unknown,
    signal: AbortSignal,
    lease: Lease,
  ): Promise<boolean> | false {
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      this.deps.cutShort.record(entry, reason instanceof WorkCut ? reason.why : 'shutdown');
      return false;
    }
    if (error instanceof LeaseLostError) {
      this.deps.cutShort.record(entry, 'lease_lost');
      this.deps.logger.warn('The lane was taken over: its new holder answers the message', {
        inbox: entry.id,
        error: errorMessage(error),
      });
      return false;
    }
    return this.failed(entry, outbound, error, lease);
  }

  /** A retry later, or, after the last attempt, the failure reply. */
  private async failed(
    entry: InboxEntry,
    outbound: Outbound,
    error: unknown,
    lease: Lease,
  ): Promise<boolean> {
    const { ledger, logger } = this.deps;
    const attempts = entry.attempts + 1;
    logger.error('Could not answer a message', {
      platform: entry.lane.platform,
      inbox: entry.id,
      attempts,
      error: errorMessage(error),
    });
    try {
      if (attempts < this.deps.maxAttempts) {
        this.deps.cutShort.record(entry, 'error');
        await ledger.retryLater(entry.id, 1_000 * 2 ** attempts);
        return false;
      }
      await outbound
        .post(entry, { seq: 0, text: FAILURE_REPLY })
        .catch((error: unknown) =>
          logger.warn('Could not post the failure reply', { error: errorMessage(error) }),
        );
      await ledger.finish(entry.id, 'failed', lease);
      this.deps.answered(entry, 'failed');
      return true;
    } catch {
      // The database is down too: the lease runs out and the message is tried again.
      return false;
    }
  }
}
