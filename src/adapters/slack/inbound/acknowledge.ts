import { HTTPReceiver, type App, type Logger as BoltLogger, type ReceiverEvent } from '@slack/bolt';
import { errorMessage } from '../../../core/errors.ts';
import { NotRecordedError } from '../../../core/ports/platform/delivery.ts';

/**
 * Runs one request through Bolt, then acknowledges it if no listener did: a click on another
 * app's button, a payload of a type Bolt cannot tell, and a body Bolt chokes on are acknowledged
 * and dropped, never left for Slack to time out on (and to count as our failure). Only a message
 * that could not be stored stays unacknowledged, so that Slack sends it again: that rethrows.
 */
export async function processThenAck(
  app: App,
  event: ReceiverEvent,
  logger: BoltLogger,
): Promise<void> {
  let acked = false;
  const ack: ReceiverEvent['ack'] = async (response) => {
    acked = true;
    await event.ack(response);
  };
  try {
    await app.processEvent({ ...event, ack });
  } catch (error) {
    if ((error as { code?: unknown }).code === NotRecordedError.CODE) throw error;
    logger.warn(`Dropped a Slack request that could not be handled: ${errorMessage(error)}`);
  }
  if (!acked) {
    logger.debug(
      `Acknowledged a Slack request no listener took (${String(event.body.type ?? event.body.command)})`,
    );
    await ack();
  }
}

/**
 * Bolt's HTTP receiver (signatures, url_verification, `processBeforeResponse`), acknowledging as
 * above.
 */
export class AckingHttpReceiver extends HTTPReceiver {
  constructor(options: ConstructorParameters<typeof HTTPReceiver>[0] & { logger: BoltLogger }) {
    super(options);
    this.boltLogger = options.logger;
  }

  private readonly boltLogger: BoltLogger;

  override init(app: App): void {
    const logger = this.boltLogger;
    super.init(
      new Proxy(app, {
        get: (target, key) =>
          key === 'processEvent'
            ? (event: ReceiverEvent) => processThenAck(target, event, logger)
            : Reflect.get(target, key),
      }),
    );
  }
}
