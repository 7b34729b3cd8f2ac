import type { RequestListener } from 'node:http';
import { App, LogLevel, webApi, type Logger as BoltLogger } from '@slack/bolt';
import { NotRecordedError } from '../../core/ports/platform/delivery.ts';
import type { Delivery, PlatformAdapter } from '../../core/ports/platform/platform.ts';
import type { Logger } from '../../core/logger.ts';
import { answeringCommands } from '../../core/delivery/commands/commands.ts';
import { fetchThrough } from '../../proxy.ts';
import { errorMessage } from '../../core/errors.ts';
import { AckAfterListenerReceiver } from './inbound/socket-receiver.ts';
import { installedWorkspaces, singleWorkspace, type SlackClients } from './installs/clients.ts';
import {
  SlackInstalls,
  withInstallRoutes,
  type SlackInstallsOptions,
} from './installs/installs.ts';
import { listenForLifecycle } from './installs/lifecycle.ts';
import { AckingHttpReceiver } from './inbound/acknowledge.ts';
import { listenForCommands } from './inbound/commands.ts';
import { listenForMessages } from './inbound/events.ts';
import { listenForAgentThreads } from './inbound/assistant.ts';
import { listenForFeedback } from './feedback.ts';
import { listenForClicks } from './inbound/interactions.ts';
import { slackOutbound } from './outbound.ts';
import { listenForReactions } from './inbound/reactions.ts';
import type { SlackAdapterConfig, SlackParts } from './parts.ts';
import { INSTALL_PATH } from './settings.ts';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';
import { slackChannelAccess } from './channel-access.ts';

export type { SlackAdapterConfig } from './parts.ts';
export { SLACK_HELP, SLACK_MESSAGE_LIMIT, SLACK_REFUSAL, toSlackMessages } from './text.ts';

/**
 * How far ahead of our clock a signed request may be dated: the same 5 minutes Bolt allows behind
 * it.
 */
const MAX_CLOCK_SKEW_SEC = 300;

function boltLogger(logger: Logger): BoltLogger {
  let level = LogLevel.INFO;
  const text = (msgs: unknown[]) =>
    `[slack] ${msgs.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' ')}`;
  return {
    // Bolt's debug lines carry whole request bodies: replies, tool output, what users wrote.
    debug: (...msgs) => logger.trace(text(msgs)),
    info: (...msgs) => logger.info(text(msgs)),
    warn: (...msgs) => logger.warn(text(msgs)),
    error: (...msgs) => logger.error(text(msgs)),
    setLevel: (l) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

/** Socket Mode when an app token is set (acknowledged after the listener), else HTTP. */
function receiverFor(
  config: SlackAdapterConfig,
  logger: Logger,
  apiUrl: string | undefined,
): AckingHttpReceiver | AckAfterListenerReceiver {
  return config.appToken
    ? new AckAfterListenerReceiver({
        appToken: config.appToken,
        logger: boltLogger(logger),
        apiUrl,
        dispatcher: config.dispatcher,
      })
    : new AckingHttpReceiver({
        signingSecret: config.signingSecret!,
        processBeforeResponse: true,
        logger: boltLogger(logger),
        // Bolt refuses requests signed over 5 minutes ago, but not ones dated in the future.
        customPropertiesExtractor: (request) => ({
          slackRequestTimestamp: Number(request.headers['x-slack-request-timestamp']),
        }),
      });
}

/**
 * Spool in Slack threads: Slack events become inbound messages (one lane per thread), and the
 * delivery engine's replies go back into the thread. A message is in the inbox before Slack hears
 * it arrived: over HTTP Bolt answers after the listener (`processBeforeResponse`), and over Socket
 * Mode the receiver acknowledges after it. This file wires Bolt; what flows through it is
 * translated in events.ts (messages in), commands.ts (/spool), interactions.ts (clicks, Stop) and
 * outbound.ts (replies, status, files).
 */
export class SlackAdapter implements PlatformAdapter {
  readonly name = 'Slack';
  private readonly app: App;
  private readonly receiver: AckingHttpReceiver | AckAfterListenerReceiver;
  /** "Add to Slack", when workspaces install the app (no SLACK_BOT_TOKEN). */
  private readonly installs?: SlackInstalls;
  /** Each workspace's Web API client: the one token's, or each installation's. */
  private readonly clients: SlackClients;
  private started = false;

  constructor(
    private readonly config: SlackAdapterConfig,
    delivery: Delivery,
    private readonly logger: Logger,
  ) {
    // Bolt's Web API base URL must end in a slash.
    const apiUrl = config.apiUrl ? `${config.apiUrl}/` : undefined;
    this.receiver = receiverFor(config, logger, apiUrl);
    const clientOptions = {
      ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
      ...(config.dispatcher ? { fetch: fetchThrough(config.dispatcher) } : {}),
    };
    this.installs = installsFor(config, clientOptions, logger, async (installed) => {
      for (const workspace of (await config.installationStore?.workspacesOf(installed)) ?? [])
        await delivery.workspaceBack({ platform: 'slack', workspace });
    });
    this.app = new App({
      // One workspace's token, or each event's own workspace's, from its installation.
      ...(this.installs ? { authorize: this.installs.authorize } : { token: config.botToken }),
      receiver: this.receiver,
      clientOptions,
      logger: boltLogger(logger),
    });
    const clients: SlackClients = (this.clients =
      this.installs && config.installationStore
        ? installedWorkspaces(config.installationStore, {
            ...clientOptions,
            logger: this.app.logger,
          })
        : singleWorkspace(this.app));
    this.app.error(async (error) => {
      // Bolt answers 500 (HTTP), and Socket Mode leaves it unacknowledged: Slack sends it again.
      if (error.code === NotRecordedError.CODE) throw error;
      logger.error('Slack listener failed', { error: error.message });
    });
    this.app.use(async ({ context, next }) => {
      const aheadSec = Number(context.slackRequestTimestamp) - Date.now() / 1000;
      if (aheadSec > MAX_CLOCK_SKEW_SEC)
        return logger.warn('Dropped a Slack request dated in the future', {
          aheadSec: Math.round(aheadSec),
        });
      await next();
    });
    // The delivery engine, its commands answered in time or with plain words
    // (core/delivery/commands/commands.ts).
    const parts: SlackParts = {
      app: this.app,
      clients,
      config,
      delivery: answeringCommands(delivery),
      logger,
    };
    delivery.register('slack', slackOutbound(parts), {
      channels: config.allowedChannels,
      users: config.allowedUsers,
    });
    listenForMessages(parts);
    listenForClicks(parts);
    listenForFeedback(parts);
    listenForAgentThreads(parts);
    listenForCommands(parts);
    listenForReactions(parts);
    listenForLifecycle(parts);
  }

  /**
   * Over Socket Mode, connects. Over HTTP, Slack's requests reach `httpHandler` on the bot's one
   * HTTP server (see `serveRoutes`), which answers 503 until this has started.
   */
  async start(): Promise<void> {
    await this.checkWebApi();
    if (this.receiver instanceof AckAfterListenerReceiver) await this.app.start();
    this.started = true;
    this.logger.info(
      this.config.appToken
        ? 'Slack: connected over Socket Mode'
        : 'Slack: receiving events at /slack/events',
    );
    if (this.installs) this.logger.info(`Slack: workspaces install Spool at ${INSTALL_PATH}`);
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.receiver instanceof AckAfterListenerReceiver) await this.app.stop();
  }

  /** Whether Slack's events reach Spool now: over Socket Mode, while its WebSocket is open. */
  ready(): boolean {
    return (
      this.started &&
      (this.receiver instanceof AckAfterListenerReceiver ? this.receiver.connected() : true)
    );
  }

  /** Who may read a channel: its members, as its workspace's Slack lists them (the web pages). */
  channelAccess(): ChannelAccess {
    return slackChannelAccess((workspace) => this.clients.of(workspace));
  }

  /**
   * For the bot's HTTP server: over HTTP, the handler of Slack's requests (/slack/events); with
   * installs, the install page and its redirect too.
   */
  httpHandler(): RequestListener | undefined {
    const events = this.eventsHandler();
    return this.installs ? withInstallRoutes(this.installs, events) : events;
  }

  private eventsHandler(): RequestListener | undefined {
    const receiver = this.receiver;
    if (!(receiver instanceof AckingHttpReceiver)) return undefined;
    return (req, res) => {
      try {
        receiver.requestListener(req, res);
      } catch {
        // Bolt throws for a path it does not serve.
        res.writeHead(404);
        res.end();
      }
    };
  }

  /**
   * One auth.test without retries before anything starts: an unreachable Web API, or a refused
   * token, is named now, instead of "fetch failed" retried in the logs for half an hour.
   */
  private async checkWebApi(): Promise<void> {
    // With installs, there is no token until a workspace installs the app.
    if (!this.config.botToken) return;
    const url = this.config.apiUrl ?? 'https://slack.com/api';
    const client = new webApi.WebClient(this.config.botToken, {
      slackApiUrl: `${url}/`,
      retryConfig: { retries: 0 },
      timeout: 10_000,
      logger: this.app.logger,
    });
    try {
      await client.auth.test();
    } catch (error) {
      throw new Error(
        `Slack's Web API at ${url} did not answer auth.test (${errorMessage(error)}): check SLACK_API_URL, the network, and SLACK_BOT_TOKEN`,
      );
    }
  }
}

/** "Add to Slack" through Bolt's InstallProvider, when workspaces install the app. */
function installsFor(
  config: SlackAdapterConfig,
  clientOptions: webApi.WebClientOptions,
  logger: Logger,
  onInstalled: SlackInstallsOptions['onInstalled'],
): SlackInstalls | undefined {
  const { installs, clientId, clientSecret, installationStore, stateStore } = config;
  if (!installs || !clientId || !clientSecret || !installationStore || !stateStore)
    return undefined;
  return new SlackInstalls({
    ...installs,
    clientId,
    clientSecret,
    installationStore,
    stateStore,
    clientOptions,
    // Slack's authorize page, on the host SLACK_API_URL names (a test's fake Slack).
    ...(config.apiUrl
      ? { authorizationUrl: `${new URL(config.apiUrl).origin}/oauth/v2/authorize` }
      : {}),
    boltLogger: boltLogger(logger),
    logger,
    onInstalled,
  });
}
