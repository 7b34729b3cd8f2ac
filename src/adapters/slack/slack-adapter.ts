import type { RequestListener } from 'node:http';
import {
  App,
  LogLevel,
  webApi,
  type Context,
  type Logger as BoltLogger,
  type SlackEventMiddlewareArgs,
  type SlashCommand,
} from '@slack/bolt';
import { ErrorCode, type WebAPIPlatformError, type WebClient } from '@slack/web-api';
import slackifyMarkdown from 'slackify-markdown';
import type { Dispatcher } from 'undici';
import {
  FileRefusedError,
  NotRecordedError,
  type ApprovalButtons,
  type InboundFile,
  type InboundMessage,
  type ReplyFile,
} from '../../core/ports/delivery.ts';
import type {
  Delivery,
  OutgoingChunk,
  Outbound,
  PlatformAdapter,
} from '../../core/ports/platform.ts';
import { fetchFileBytes, servedFrom } from '../shared/fetch-file.ts';
import type { Logger } from '../../core/logger.ts';
import { clickReply } from '../../core/delivery/approval-text.ts';
import { formClickReply } from '../../core/delivery/forms.ts';
import { NOT_RECORDED_REPLY } from '../../core/delivery/engine.ts';
import { policyFor, type Policy } from '../../core/delivery/policy.ts';
import { answeringCommands, commandFailureReply } from '../../core/delivery/commands.ts';
import { FORM_ACTIONS, formActionOf, formBlocks, formValues } from './form-blocks.ts';
import { fetchThrough } from '../../proxy.ts';
import { resultAsFile, resultAsMessages } from '../../core/delivery/stored-result.ts';
import { formatHits } from '../../core/builtins/search-history.ts';
import type { SlackSettings } from './settings.ts';
import { splitMessage } from '../shared/split-message.ts';
import { usageChartPng } from '../shared/chart.ts';
import { AckAfterListenerReceiver } from './socket-receiver.ts';
import { AckingHttpReceiver } from './acknowledge.ts';
import {
  addressedToSpool,
  editOf,
  filesOf,
  slackText,
  wordsOf,
  type SlackEvent,
  type SlackFile,
} from './message.ts';
import { errorMessage } from '../../core/errors.ts';

/**
 * How far ahead of our clock a signed request may be dated: the same 5 minutes Bolt allows behind
 * it.
 */
const MAX_CLOCK_SKEW_SEC = 300;

/** Slack renders up to 40,000 chars but folds long messages; 3,500 keeps each one readable. */
export const SLACK_MESSAGE_LIMIT = 3_500;
export const SLACK_REFUSAL = "Sorry, I'm not enabled for you in this channel.";
const THINKING_REACTION = 'hourglass_flowing_sand';
const HISTORY_MESSAGES = 50;
/**
 * Message metadata on every reply chunk, so a resumed delivery can find what a crash left
 * unrecorded.
 */
const REPLY_EVENT = 'spool_reply';
/** The action ids of an approval prompt's buttons; each button's value is the call's id. */
const APPROVE_ACTION = 'spool_approve';
const DENY_ACTION = 'spool_deny';

/** An approval prompt as Block Kit: its text, then Approve and Deny. */
function approvalBlocks(text: string, { toolCallId }: ApprovalButtons) {
  const button = (label: string, actionId: string, style: 'primary' | 'danger') => ({
    type: 'button' as const,
    text: { type: 'plain_text' as const, text: label },
    action_id: actionId,
    value: toolCallId,
    style,
  });
  return [
    { type: 'section' as const, text: { type: 'mrkdwn' as const, text } },
    {
      type: 'actions' as const,
      block_id: `approval-${toolCallId}`.slice(0, 255),
      elements: [
        button('Approve', APPROVE_ACTION, 'primary'),
        button('Deny', DENY_ACTION, 'danger'),
      ],
    },
  ];
}

export interface SlackAdapterConfig extends SlackSettings {
  /**
   * After the status API fails, how long reactions stand in before it is tried again (default 10
   * minutes).
   */
  statusRetryMs?: number;
  /** Web API calls and the Socket Mode connection go through this (a proxy). */
  dispatcher?: Dispatcher;
  /** The per-channel policy (POLICY_FILE): where replies may unfurl. */
  policy?: Policy;
}

/** Slack's file host: the only place the bot token goes with a file download. */
const SLACK_FILES_ORIGIN = 'https://files.slack.com';

/** A file as the inbox keeps it; one Slack lists without a URL is looked up by its id when read. */
const inboundFile = (f: SlackFile): InboundFile => ({
  name: f.name ?? f.title ?? `file ${f.id ?? ''}`.trim(),
  ...(f.mimetype ? { mimeType: f.mimetype } : {}),
  sizeBytes: typeof f.size === 'number' ? f.size : 0,
  ...((f.url_private_download ?? f.url_private)
    ? { url: f.url_private_download ?? f.url_private }
    : {}),
  ...(f.id ? { id: f.id } : {}),
});

/** A refusal from Slack itself (`ok: false`), as opposed to a network failure or a rate limit. */
const refusedBySlack = (error: unknown): error is WebAPIPlatformError =>
  (error as { code?: unknown }).code === ErrorCode.PlatformError;

/** Markdown from the model as Slack mrkdwn, split under Slack's limit. */
export function toSlackMessages(markdown: string): string[] {
  return splitMessage(slackifyMarkdown(markdown).trim() || markdown, SLACK_MESSAGE_LIMIT);
}

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

/**
 * Spool in Slack threads: Slack events become inbound messages (one lane per thread), and the
 * delivery engine's replies go back into the thread. A message is in the inbox before Slack hears
 * it
 * arrived: over HTTP Bolt answers after the listener (`processBeforeResponse`), and over Socket
 * Mode the receiver acknowledges after it.
 */
export class SlackAdapter implements PlatformAdapter {
  readonly name = 'Slack';
  private readonly app: App;
  private readonly receiver: AckingHttpReceiver | AckAfterListenerReceiver;
  private started = false;
  /**
   * assistant.threads.setStatus fails for some apps and workspaces (scopes, plans, outages): after
   * a failure a reaction stands in, and the status API is tried again after a while, never given
   * up.
   */
  private statusApiAfter = 0;
  /** Until when agent sessions are not tried again (the app is not declared as an agent). */
  private sessionsApiAfter = 0;
  /** The messages whose turn opened the thread's agent session, to mark it active at the end. */
  private readonly sessions = new Set<string>();
  /** The delivery engine, its commands answered in time or with plain words (see commands.ts). */
  private readonly delivery: Delivery;

  constructor(
    private readonly config: SlackAdapterConfig,
    delivery: Delivery,
    private readonly logger: Logger,
  ) {
    this.delivery = answeringCommands(delivery);
    // Bolt's Web API base URL must end in a slash.
    const apiUrl = config.apiUrl ? `${config.apiUrl}/` : undefined;
    this.receiver = config.appToken
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
    this.app = new App({
      token: config.botToken,
      receiver: this.receiver,
      clientOptions: {
        ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
        ...(config.dispatcher ? { fetch: fetchThrough(config.dispatcher) } : {}),
      },
      logger: boltLogger(logger),
    });
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
    delivery.register('slack', this.outbound(), {
      channels: config.allowedChannels,
      users: config.allowedUsers,
    });
    this.listen();
  }

  /** Messages and mentions, approval clicks, and /spool. */
  private listen(): void {
    this.app.event('app_mention', ({ event, body, context }) =>
      this.receive(event as unknown as SlackEvent, body, context),
    );
    this.app.message(({ message, body, context }) =>
      this.receive(message as unknown as SlackEvent, body, context),
    );
    // The agent session's Stop button: the thread's turn ends, on whichever replica runs it.
    this.app.event('agent_session_stopped', async ({ event, body }) => {
      const stopped = event as unknown as { channel: string; thread_ts?: string; user?: string };
      const lane = {
        platform: 'slack',
        workspace: body.team_id,
        channel: stopped.channel,
        thread: stopped.thread_ts ?? '',
      };
      const outcome = await this.delivery.stopTurn({ lane, user: stopped.user ?? '' });
      // Nothing ran: the session is told it is no longer processing (Slack leaves that to the app).
      if (outcome !== 'stopping')
        await this.app.client.agents.sessions
          .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: 'active' })
          .catch(() => {});
    });

    this.app.action(
      { type: 'block_actions', action_id: new RegExp(`^(${APPROVE_ACTION}|${DENY_ACTION})$`) },
      async ({ ack, body, action, respond }) => {
        await ack();
        if (action.type !== 'button' || !body.channel) return;
        const outcome = await this.delivery.decideApproval({
          lane: this.laneOfClick(body),
          user: body.user.id,
          toolCallId: action.value ?? '',
          approve: action.action_id === APPROVE_ACTION,
        });
        const text = clickReply(outcome, 'slack');
        if (text) await respond({ response_type: 'ephemeral', replace_original: false, text });
      },
    );

    this.app.action(
      {
        type: 'block_actions',
        action_id: new RegExp(`^(${Object.values(FORM_ACTIONS).join('|')})$`),
      },
      async ({ ack, body, action, respond }) => {
        await ack();
        if (action.type !== 'button' || !body.channel) return;
        const outcome = await this.delivery.answerForm({
          lane: this.laneOfClick(body),
          user: body.user.id,
          questionId: action.value ?? '',
          action: formActionOf(action.action_id),
          values: formValues(body.state),
        });
        const text = formClickReply(outcome, 'slack');
        if (text) await respond({ response_type: 'ephemeral', replace_original: false, text });
      },
    );

    this.app.command('/spool', async ({ command, ack, respond }) => {
      await ack();
      // Acknowledged at once, answered through response_url: whatever fails, the person hears it.
      await this.spoolCommand(command, respond).catch(async (error: unknown) => {
        this.logger.error('Slack: /spool failed', {
          verb: command.text.trim().split(/\s+/)[0] ?? '',
          error: errorMessage(error),
        });
        await respond({ response_type: 'ephemeral', text: commandFailureReply(error) });
      });
    });
  }

  /** `/spool <verb> …`, acknowledged already. */
  private async spoolCommand(
    command: SlashCommand,
    respond: (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>,
  ): Promise<void> {
    const [verb = 'help', ...rest] = command.text.trim().split(/\s+/);
    const query = rest.join(' ');
    const lane = {
      platform: 'slack',
      workspace: command.team_id,
      channel: command.channel_id,
      thread: '',
    };
    if (verb === 'result' && query) return this.sendResult(lane, command.user_id, query, respond);
    if (verb === 'prompt') return this.askWithPrompt(lane, command.user_id, query, respond);
    if (verb === 'usage') return this.sendUsage(lane, command.user_id, query === 'chart', respond);
    if (verb !== 'recall' || !query) {
      await respond({ response_type: 'ephemeral', text: SLACK_HELP });
      return;
    }
    const hits = await this.delivery.recall({ lane, user: command.user_id }, query);
    const text = hits ? formatHits(query, hits) : SLACK_REFUSAL;
    for (const chunk of splitMessage(text, SLACK_MESSAGE_LIMIT))
      await respond({ response_type: 'ephemeral', text: chunk });
  }

  /**
   * `/spool usage`: what the person has spent here (everyone's, for an admin), only to them.
   * `/spool usage chart` adds the last 30 days as a chart in a direct message: an ephemeral
   * message cannot carry an uploaded image.
   */
  private async sendUsage(
    lane: InboundMessage['lane'],
    user: string,
    chart: boolean,
    respond: (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>,
  ): Promise<void> {
    const report = await this.delivery.usage(
      { lane, user },
      { channel: (id) => `<#${id}>`, person: (id) => `<@${id}>` },
    );
    const text = report === 'refused' ? SLACK_REFUSAL : report.text;
    for (const chunk of splitMessage(text, SLACK_MESSAGE_LIMIT))
      await respond({ response_type: 'ephemeral', text: chunk });
    if (!chart || report === 'refused') return;
    const client = this.app.client;
    try {
      const dm = await client.conversations.open({ users: user });
      await client.files.uploadV2({
        channel_id: dm.channel?.id ?? user,
        file: usageChartPng(report.days, report.currency),
        filename: 'usage.png',
        title: 'Usage, last 30 days',
      });
      await respond({
        response_type: 'ephemeral',
        text: 'Sent you the chart of the last 30 days in a direct message.',
      });
    } catch (error) {
      this.logger.warn('Slack: could not send the usage chart', { error: errorMessage(error) });
      await respond({
        response_type: 'ephemeral',
        text: `Sorry, I could not send the chart: ${errorMessage(error)}.`,
      });
    }
  }

  /**
   * `/spool prompt <server> <prompt> name=value…`: a slash command has no thread, so Spool starts
   * one, saying who asked with which prompt, and the prompt's text is their message in it.
   */
  private async askWithPrompt(
    lane: InboundMessage['lane'],
    user: string,
    command: string,
    respond: (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>,
  ): Promise<void> {
    const asked = await this.delivery.promptText({ lane, user }, command);
    if ('problem' in asked) {
      for (const text of splitMessage(asked.problem, SLACK_MESSAGE_LIMIT))
        await respond({ response_type: 'ephemeral', text });
      return;
    }
    const [server, name] = command.trim().split(/\s+/);
    const anchor = await this.app.client.chat.postMessage({
      channel: lane.channel,
      text: `<@${user}> asked with the prompt \`${server} ${name}\`.`,
    });
    const ts = anchor.ts!;
    const handled = await this.delivery
      .handleIncoming({
        lane: { ...lane, thread: ts },
        messageKey: `${lane.channel}:${ts}`,
        kind: 'message',
        user,
        text: asked.text,
        delivery: { ts },
      })
      .catch((error: unknown) => {
        if (!(error instanceof NotRecordedError)) throw error;
        return undefined;
      });
    if (!handled) await respond({ response_type: 'ephemeral', text: NOT_RECORDED_REPLY });
  }

  /** The thread a prompt's button was clicked in. */
  private laneOfClick(body: {
    team: { id: string } | null;
    channel?: { id: string };
    message?: { ts: string; thread_ts?: string };
  }) {
    return {
      platform: 'slack',
      workspace: body.team?.id ?? '',
      channel: body.channel?.id ?? '',
      thread: body.message?.thread_ts ?? body.message?.ts ?? '',
    };
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

  /**
   * Over HTTP, the handler of Slack's requests (/slack/events) for the bot's HTTP server; none over
   * Socket Mode.
   */
  httpHandler(): RequestListener | undefined {
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

  /**
   * A message event or a mention, if it is someone talking to Spool: a person (or an app the
   * channel's policy lets in), with a subtype that is a message (`ANSWERED_SUBTYPES`), in a DM, a
   * mention, or a reply in a thread Spool takes part in. A mention arrives both as app_mention and
   * as a message event: the two are one inbox row.
   */
  private async receive(
    event: SlackEvent,
    body: SlackEventMiddlewareArgs['body'],
    { botUserId = '', botId }: Context,
  ): Promise<void> {
    const edit = editOf(event, botUserId);
    if (edit) {
      const channel = String(event.channel);
      const lane = { platform: 'slack', workspace: body.team_id, channel, thread: '' };
      const outcome = await this.delivery.editIncoming({ lane, ...edit });
      return this.logger.debug('Slack: an edit', { outcome });
    }
    const addressed = addressedToSpool(event, botUserId, botId);
    if ('ignored' in addressed)
      return this.logger.debug('Slack: not a message to answer', {
        type: String(event.type),
        why: addressed.ignored,
      });
    const files = filesOf(event).map(inboundFile);
    const fromApp = addressed.sender === 'app';
    await this.delivery.handleIncoming({
      lane: {
        platform: 'slack',
        workspace: body.team_id,
        channel: event.channel as string,
        thread: (event.thread_ts ?? event.ts) as string,
      },
      // The message, not the delivery: app_mention and message events of one message are one row.
      messageKey: `${String(event.channel)}:${String(event.ts)}`,
      kind: 'message',
      user: (fromApp ? (event.bot_id ?? event.app_id) : event.user) as string,
      ...(fromApp ? { fromApp } : {}),
      // A text of another type is passed on as it is, for the delivery engine to name as malformed.
      text:
        event.text === undefined || typeof event.text === 'string'
          ? wordsOf(event, botUserId)
          : (event.text as string),
      delivery: { ts: event.ts as string },
      knownLaneOnly: addressed.knownLaneOnly,
      ...(files.length ? { files } : {}),
    });
  }

  /** One chunk of a reply as a message in the thread (or a file, with its text). */
  private async post(
    client: WebClient,
    lane: InboundMessage['lane'],
    chunk: OutgoingChunk,
  ): Promise<string> {
    if (chunk.file) return this.upload(client, lane, chunk.text, chunk.file);
    const metadata = chunk.inboxId
      ? { event_type: REPLY_EVENT, event_payload: { inbox: chunk.inboxId, seq: chunk.seq } }
      : undefined;
    const blocks = chunk.approval
      ? approvalBlocks(toSlackMessages(chunk.text)[0]!, chunk.approval)
      : chunk.form
        ? formBlocks(toSlackMessages(chunk.text)[0]!, chunk.form)
        : undefined;
    // No previews of the links a reply carries, unless the channel's policy allows them.
    const unfurl = policyFor(this.config.policy, lane).unfurl === true;
    const sent = await client.chat.postMessage({
      channel: lane.channel,
      thread_ts: lane.thread,
      text: chunk.text,
      unfurl_links: unfurl,
      unfurl_media: unfurl,
      metadata,
      ...(blocks ? { blocks } : {}),
    });
    return sent.ts ?? '';
  }

  private outbound(): Outbound {
    const client = this.app.client;
    return {
      render: toSlackMessages,
      postsFiles: true,
      post: ({ lane }, chunk) => this.post(client, lane, chunk),
      // The text alone, with no blocks: the buttons go.
      edit: async ({ lane }, ts, chunk) => {
        await client.chat.update({ channel: lane.channel, ts, text: chunk.text, blocks: [] });
      },
      removeFile: (_message, fileId) => this.deleteFile(client, fileId),
      findPosted: async ({ lane, delivery }, chunk) => {
        const replies = await client.conversations.replies({
          channel: lane.channel,
          ts: lane.thread,
          oldest: delivery.ts,
          include_all_metadata: true,
          limit: 200,
        });
        const payload = (m: {
          metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
        }) => m.metadata?.event_type === REPLY_EVENT && m.metadata.event_payload;
        // An upload carries no metadata: its file's name, unique to the reply, finds it.
        if (chunk.file)
          return replies.messages
            ?.flatMap((m) => m.files ?? [])
            .find((f) => f.name === chunk.file!.name)?.id;
        return replies.messages?.find((m) => {
          const p = payload(m);
          return p && String(p.inbox) === chunk.inboxId && Number(p.seq) === chunk.seq;
        })?.ts;
      },
      refuse: async ({ lane, user }) => {
        await client.chat.postEphemeral({
          channel: lane.channel,
          user,
          thread_ts: lane.thread,
          text: SLACK_REFUSAL,
        });
      },
      showWorking: (message) => this.showStatus(client, message),
      showStatus: (message, status) => this.updateStatus(client, message, status),
      fetchFile: async (_message, file, maxBytes, signal) => {
        const url = file.url ?? (await this.fileUrl(client, file));
        // The bot token goes only to Slack's file host (or the Web API's own host, where one is
        // set).
        const origins = [
          SLACK_FILES_ORIGIN,
          ...(this.config.apiUrl ? [new URL(this.config.apiUrl).origin] : []),
        ];
        if (!servedFrom(url, origins))
          throw new Error(`it is not on Slack's file host (${SLACK_FILES_ORIGIN})`);
        return fetchFileBytes(url, {
          headers: { authorization: `Bearer ${this.config.botToken}` },
          maxBytes,
          signal,
          dispatcher: this.config.dispatcher,
        });
      },
      // Mentioned into a thread that already has messages: what was said before, so it has the
      // context.
      threadContext: (message) =>
        message.lane.thread === message.delivery.ts
          ? Promise.resolve(undefined)
          : this.withThreadHistory(client, message),
    };
  }

  /**
   * Where a file Slack listed without a URL (Slack Connect's `check_file_info`) is served, from
   * files.info.
   */
  private async fileUrl(client: WebClient, file: InboundFile): Promise<string> {
    if (!file.id) throw new Error('Slack listed it with neither a URL nor an id');
    const info = await client.files.info({ file: file.id }).catch((error: unknown) => {
      throw new Error(
        `Slack did not say where it is (files.info: ${refusedBySlack(error) ? error.data.error : errorMessage(error)})`,
      );
    });
    const url = info.file?.url_private_download ?? info.file?.url_private;
    if (!url) throw new Error('Slack did not say where it is (files.info gave no URL)');
    return url;
  }

  /**
   * A stored result, whole, as a file in a direct message to the person who asked: it never lands
   * in the channel.
   */
  private async sendResult(
    lane: InboundMessage['lane'],
    user: string,
    toolCallId: string,
    respond: (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>,
  ): Promise<void> {
    const found = await this.delivery.result({ lane, user }, toolCallId);
    if (found === 'refused')
      return void (await respond({ response_type: 'ephemeral', text: SLACK_REFUSAL }));
    const { text, file } = resultAsFile(toolCallId, found);
    if (!file) return void (await respond({ response_type: 'ephemeral', text }));
    const client = this.app.client;
    try {
      const dm = await client.conversations.open({ users: user });
      const channel = dm.channel?.id ?? user;
      await this.upload(client, { channel }, text, file).catch(async (error: unknown) => {
        if (!(error instanceof FileRefusedError)) throw error;
        // As code, so that the result reads as it is and nothing in it pings anyone.
        const render = (content: string) =>
          splitMessage(`\`\`\`\n${content}\n\`\`\``, SLACK_MESSAGE_LIMIT);
        for (const chunk of resultAsMessages({ text, file }, error.message, render))
          await client.chat.postMessage({
            channel,
            text: chunk,
            unfurl_links: false,
            unfurl_media: false,
          });
      });
      await respond({
        response_type: 'ephemeral',
        text: 'Sent you the full result in a direct message.',
      });
    } catch (error) {
      this.logger.warn('Slack: could not send a stored result', { error: errorMessage(error) });
      await respond({
        response_type: 'ephemeral',
        text: `Sorry, I could not send the result: ${errorMessage(error)}. Please try again.`,
      });
    }
  }

  /** A file with its message, in a thread or a DM; returns the file's id. */
  private async upload(
    client: WebClient,
    where: { channel: string; thread?: string },
    text: string,
    file: ReplyFile,
  ): Promise<string> {
    const upload = {
      initial_comment: text,
      filename: file.name,
      title: file.name,
      content: file.content,
      ...(file.language ? { snippet_type: file.language } : {}),
    };
    const sent = await client.files
      .uploadV2(
        where.thread
          ? { ...upload, channel_id: where.channel, thread_ts: where.thread }
          : { ...upload, channel_id: where.channel },
      )
      .catch((error: unknown) => {
        // Slack's no (a missing files:write scope, uploads turned off) holds on every retry.
        throw refusedBySlack(error)
          ? new FileRefusedError(`Slack said ${error.data.error}`)
          : error;
      });
    const [completed] = (sent as { files?: Array<{ files?: Array<{ id?: string }> }> }).files ?? [];
    return completed?.files?.[0]?.id ?? file.name;
  }

  private async withThreadHistory(
    client: WebClient,
    message: InboundMessage,
  ): Promise<string | undefined> {
    try {
      const replies = await client.conversations.replies({
        channel: message.lane.channel,
        ts: message.lane.thread,
        limit: HISTORY_MESSAGES,
      });
      const earlier = (replies.messages ?? [])
        .filter((m) => m.ts !== message.delivery.ts && m.text)
        .map((m) => `<@${m.user ?? m.bot_id ?? 'unknown'}>: ${slackText(m.text!)}`);
      return earlier.length
        ? `Earlier in this Slack thread:\n${earlier.join('\n')}\n\nNew message from <@${message.user}>:\n${message.text}`
        : undefined;
    } catch (error) {
      this.logger.warn('Slack: could not read thread history', { error: errorMessage(error) });
      return undefined;
    }
  }

  /** "is thinking…" in the thread where Slack supports it, else a reaction; returns its end. */
  /** A reply file's id is what it was posted as: deleting it takes it from the thread. */
  private async deleteFile(client: WebClient, fileId: string): Promise<void> {
    await client.files.delete({ file: fileId }).catch((error: unknown) => {
      if ((error as WebAPIPlatformError).data?.error !== 'file_not_found') throw error;
    });
  }

  /** Where the status API answers; with reactions standing in, the reaction says enough. */
  private async updateStatus(
    client: WebClient,
    message: InboundMessage,
    status: string,
  ): Promise<void> {
    await this.openSession(client, message);
    const { lane } = message;
    if (Date.now() < this.statusApiAfter) return;
    await client.assistant.threads.setStatus({
      channel_id: lane.channel,
      thread_ts: lane.thread,
      status: `is ${status}…`,
    });
  }

  /**
   * The thread's agent session, where Slack has Spool as an agent: opened (`processing`, with its
   * Stop button, titled by the first question) once a turn runs long enough to show a status, so a
   * quick turn costs no more calls; `active` when it ends. Where sessions are refused, tried again
   * after `statusRetryMs`.
   */
  private async openSession(client: WebClient, { lane, text, messageKey }: InboundMessage) {
    if (this.sessions.has(messageKey) || Date.now() < this.sessionsApiAfter) return;
    try {
      await client.agents.sessions.setStatus({
        channel_id: lane.channel,
        thread_ts: lane.thread,
        status: 'processing',
        title: sessionTitle(text),
      });
      this.sessions.add(messageKey);
    } catch {
      this.sessionsApiAfter = Date.now() + (this.config.statusRetryMs ?? 600_000);
    }
  }

  private async closeSession(client: WebClient, { lane, messageKey }: InboundMessage) {
    if (!this.sessions.delete(messageKey)) return;
    await client.agents.sessions
      .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: 'active' })
      .catch(() => {});
  }

  private async showStatus(
    client: WebClient,
    message: InboundMessage,
  ): Promise<(replyFollows: boolean) => Promise<void>> {
    const endIndicator = await this.showIndicator(client, message);
    return async (replyFollows) => {
      await endIndicator(replyFollows);
      await this.closeSession(client, message);
    };
  }

  private async showIndicator(
    client: WebClient,
    { lane, delivery }: InboundMessage,
  ): Promise<(replyFollows: boolean) => Promise<void>> {
    if (Date.now() >= this.statusApiAfter) {
      try {
        await client.assistant.threads.setStatus({
          channel_id: lane.channel,
          thread_ts: lane.thread,
          status: 'is thinking…',
        });
        // Slack clears the status when the app replies in the thread: one call per turn, not two.
        return async (replyFollows) => {
          // Best effort: Slack drops a status by itself after two minutes without a message.
          if (!replyFollows)
            await client.assistant.threads
              .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: '' })
              .catch(() => {});
        };
      } catch {
        this.statusApiAfter = Date.now() + (this.config.statusRetryMs ?? 600_000);
      }
    }
    const reaction = { channel: lane.channel, timestamp: delivery.ts!, name: THINKING_REACTION };
    // Only an indicator: a reaction Slack refuses (already there, no scope) changes nothing that
    // matters.
    await client.reactions.add(reaction).catch(() => {});
    return async () => {
      // As above: an indicator, best effort.
      await client.reactions.remove(reaction).catch(() => {});
    };
  }
}

/** A session's title: the first line of the question that opened it, within Slack's 200 chars. */
const sessionTitle = (text: string) =>
  (text.split('\n').find((line) => line.trim()) ?? 'Spool').trim().slice(0, 200);

export const SLACK_HELP = [
  '*Spool* answers in threads. Mention me in a channel, or message me directly; in a thread I have joined, just keep talking.',
  '• `/spool recall <words>`: earlier tool runs and messages in this channel that match (only you see the answer).',
  '• `/spool result <tool_call_id>`: the whole result of a tool run recall found, as a file in a direct message.',
  '• `/spool prompt <server> <prompt> name=value…`: ask with a prompt a tool server offers, in a thread of its own (`/spool prompt` lists them).',
  '• `/spool usage [chart]`: what you spent here today, this week and this month (everything, for an admin), only to you; `chart` adds the last 30 days in a direct message.',
  '• `/spool help`: this message.',
].join('\n');
