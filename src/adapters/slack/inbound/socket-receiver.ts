import type { App, Logger as BoltLogger, Receiver } from '@slack/bolt';
import { SocketModeClient } from '@slack/socket-mode';
import type { Dispatcher } from 'undici';
import { processThenAck } from './acknowledge.ts';

/**
 * Socket Mode that acknowledges an event only after Spool's listener has returned, that is after
 * the message is in the inbox. Bolt's own receiver acknowledges events before any listener runs,
 * so a crash in between would lose a message Slack believes was delivered. This is the Socket
 * Mode twin of the HTTP receiver's `processBeforeResponse`. An event that could not be stored is
 * never acknowledged. Other payloads (slash commands, clicks) are acknowledged when their listener
 * says, or after it (see `processThenAck`).
 */
export class AckAfterListenerReceiver implements Receiver {
  private app?: App;
  private readonly client: SocketModeClient;

  constructor(options: {
    appToken: string;
    logger: BoltLogger;
    apiUrl?: string;
    dispatcher?: Dispatcher;
  }) {
    this.client = new SocketModeClient({
      appToken: options.appToken,
      logger: options.logger,
      // Carries the WebSocket, and apps.connections.open too (the client wraps it into its fetch).
      dispatcher: options.dispatcher,
      clientOptions: options.apiUrl ? { slackApiUrl: options.apiUrl } : undefined,
    });
    this.client.on(
      'slack_event',
      async ({ ack, body, retry_num: retryNum, retry_reason: retryReason }) => {
        let acked = false;
        const ackOnce = async (response?: unknown) => {
          if (acked) return;
          acked = true;
          await ack(response as Record<string, unknown> | undefined);
        };
        const isEvent = body?.type === 'event_callback';
        try {
          await processThenAck(
            this.app!,
            { body, retryNum, retryReason, ack: isEvent ? async () => {} : ackOnce },
            options.logger,
          );
        } catch {
          // Not stored (the app's error handler rethrows only that): unacknowledged, Slack sends it
          // again.
          return;
        }
        await ackOnce();
      },
    );
  }

  init(app: App): void {
    this.app = app;
  }

  /** Whether the WebSocket to Slack is open. */
  connected(): boolean {
    return this.client.websocket?.isActive() ?? false;
  }

  start(): Promise<unknown> {
    return this.client.start();
  }

  stop(): Promise<unknown> {
    return this.client.disconnect();
  }
}
