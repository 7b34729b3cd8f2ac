import { KeyedQueue } from './keyed-queue.ts';
import {
  NotRecordedError,
  type DeliveryPort,
  type InboundMessage,
  type InboxEntry,
} from '../../ports/platform/delivery.ts';
import type { Answered, Handled, HandleOptions } from '../../ports/platform/platform.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { wellFormed } from '../../well-formed.ts';
import { problemsOf } from './malformed.ts';
import { policyFor, type Policy } from '../rules/policy.ts';
import type { Platforms } from '../rules/platforms.ts';

export interface IntakeDeps {
  ledger: Pick<DeliveryPort, 'record'>;
  logger: Logger;
  platforms: Platforms;
  policy: Policy | undefined;
  /** Hands the lane of a recorded message to the lanes. */
  work(laneId: string): void;
}

/**
 * A message's way in: checked, recorded (deduplicated by the message itself, each lane's in the
 * order they arrived), refused or acknowledged, then handed to its lane. Whoever asked to wait for
 * the reply is told once it is delivered.
 */
export class Intake {
  private readonly recording = new KeyedQueue();
  private readonly waiters = new Map<string, (outcome: Answered) => void>();

  constructor(private readonly deps: IntakeDeps) {}

  /** Record, acknowledge, hand to the lane (see DeliveryEngine.handleIncoming). */
  async admit(unchecked: InboundMessage, options: HandleOptions): Promise<Handled> {
    const { logger, platforms } = this.deps;
    const problems = problemsOf(unchecked);
    if (problems.length > 0) {
      logger.warn('Dropped a malformed message', {
        platform: String(unchecked.lane?.platform),
        problems: problems.join(', '),
      });
      return { status: 'malformed', problems };
    }
    if (unchecked.fromApp && !policyFor(this.deps.policy, unchecked.lane).apps)
      return { status: 'ignored' };
    // Stored before anything else, so made storable first (NUL and lone surrogates; see
    // wellFormed).
    const message = { ...unchecked, text: wellFormed(unchecked.text) };
    const { outbound } = platforms.get(message.lane.platform);
    const refused = !platforms.permits(message);
    const entry = await this.record(message, refused);
    if (!entry) return { status: 'duplicate' };
    if (refused) {
      await outbound
        .refuse(message)
        .catch((error: unknown) =>
          logger.warn('Could not send a refusal', { error: errorMessage(error) }),
        );
      return { status: 'refused' };
    }
    await options
      .acknowledge?.()
      .catch((error: unknown) =>
        logger.warn('Could not acknowledge a message', { error: errorMessage(error) }),
      );
    const answered = options.waitForReply
      ? new Promise<Answered>((resolve) => this.waiters.set(entry.id, resolve))
      : undefined;
    this.deps.work(entry.laneId);
    return { status: 'accepted', answered };
  }

  /** Tells whoever waits for the reply to this message how it ended. */
  settled(entry: InboxEntry, outcome: Answered): void {
    this.waiters.get(entry.id)?.(outcome);
    this.waiters.delete(entry.id);
  }

  /** Undefined for a message recorded before; NotRecordedError when it cannot be stored now. */
  private async record(message: InboundMessage, refused: boolean): Promise<InboxEntry | undefined> {
    try {
      // One lane's messages are stored in the order they arrived here: their inbox ids are their
      // order.
      return await this.recording.run(JSON.stringify(message.lane), () =>
        this.deps.ledger.record(message, refused),
      );
    } catch (error) {
      // Not stored, so not acknowledged either: the platform (or the person) sends it again.
      this.deps.logger.error('Could not record an inbound message', {
        platform: message.lane.platform,
        error: errorMessage(error),
      });
      throw new NotRecordedError(`the message could not be stored: ${errorMessage(error)}`);
    }
  }
}
