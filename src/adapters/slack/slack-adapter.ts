import { App, LogLevel, type Logger as BoltLogger, type SayArguments } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import slackifyMarkdown from 'slackify-markdown';
import type { Agent } from '../../core/agent.ts';
import type { Logger } from '../../core/logger.ts';
import type { Conversation } from '../../core/types.ts';
import { formatHits } from '../../tools/search-history.ts';
import { KeyedQueue } from '../shared/keyed-queue.ts';
import type { AdapterStore } from '../shared/ports.ts';
import { splitMessage } from '../shared/split-message.ts';

/** Slack renders up to 40,000 chars but folds long messages; 3,500 keeps each one readable. */
export const SLACK_MESSAGE_LIMIT = 3_500;
const THINKING_REACTION = 'hourglass_flowing_sand';
const HISTORY_MESSAGES = 50;

export interface SlackAdapterConfig {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  port: number;
  allowedChannels?: string[];
  allowedUsers?: string[];
}

/** A user message Spool should answer, whatever event carried it. */
interface Incoming {
  eventId: string;
  team: string;
  channel: string;
  user: string;
  text: string;
  ts: string;
  threadTs?: string;
  /** The thread's conversation, when the listener already looked it up. */
  known?: Conversation;
}

/** Markdown from the model as Slack mrkdwn, split under Slack's limit. */
export function toSlackMessages(markdown: string): string[] {
  return splitMessage(slackifyMarkdown(markdown).trim() || markdown, SLACK_MESSAGE_LIMIT);
}

function boltLogger(logger: Logger): BoltLogger {
  let level = LogLevel.INFO;
  const text = (msgs: unknown[]) => `[slack] ${msgs.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' ')}`;
  return {
    debug: (...msgs) => logger.debug(text(msgs)),
    info: (...msgs) => logger.info(text(msgs)),
    warn: (...msgs) => logger.warn(text(msgs)),
    error: (...msgs) => logger.error(text(msgs)),
    setLevel: (l) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

/**
 * Spool in Slack threads. A thin translation: Slack events become conversation turns (one
 * conversation per thread), the final reply goes back into the thread.
 */
export class SlackAdapter {
  private readonly app: App;
  private readonly queue = new KeyedQueue();
  /** assistant.threads.setStatus only works for apps with the AI feature; learned on first use. */
  private statusApi: boolean | undefined;
  private botUserId = '';

  constructor(
    private readonly config: SlackAdapterConfig,
    private readonly agent: Agent,
    private readonly store: AdapterStore,
    private readonly logger: Logger,
  ) {
    this.app = new App({
      token: config.botToken,
      ...(config.appToken ? { socketMode: true, appToken: config.appToken } : { signingSecret: config.signingSecret }),
      // Bolt's Web API base URL must end in a slash.
      clientOptions: config.apiUrl ? { slackApiUrl: `${config.apiUrl}/` } : undefined,
      logger: boltLogger(logger),
    });
    this.app.error(async (error) => logger.error('Slack listener failed', { error: error.message }));

    this.app.event('app_mention', async ({ event, body, context }) => {
      this.botUserId = context.botUserId ?? this.botUserId;
      if (!event.user) return;
      await this.accept({ eventId: body.event_id, team: body.team_id, channel: event.channel, user: event.user, text: event.text, ts: event.ts, threadTs: event.thread_ts });
    });

    this.app.message(async ({ message, body, context }) => {
      this.botUserId = context.botUserId ?? this.botUserId;
      // Edits, joins, bot posts and other subtypes are not someone talking to Spool.
      if (message.subtype !== undefined || ('bot_id' in message && message.bot_id)) return;
      const { user, text = '', ts, channel } = message;
      const threadTs = 'thread_ts' in message ? message.thread_ts : undefined;
      const isDirect = message.channel_type === 'im';
      // A mention in a channel also arrives as app_mention: answer that one only.
      if (!isDirect && this.botUserId && text.includes(`<@${this.botUserId}>`)) return;
      // Outside DMs, only threads Spool is already part of.
      const known = threadTs ? await this.store.findConversation({ platform: 'slack', workspace: body.team_id, channel, thread: threadTs }) : undefined;
      if (!isDirect && !known) return;
      await this.accept({ eventId: body.event_id, team: body.team_id, channel, user, text, ts, threadTs, known });
    });

    this.app.command('/spool', async ({ command, ack, respond }) => {
      await ack();
      const [verb = 'help', ...rest] = command.text.trim().split(/\s+/);
      const query = rest.join(' ');
      if (verb !== 'recall' || !query) {
        await respond({ response_type: 'ephemeral', text: SLACK_HELP });
        return;
      }
      const hits = await this.store.searchHistory({ platform: 'slack', workspace: command.team_id, channel: command.channel_id }, { text: query, maxResults: 10 });
      for (const text of splitMessage(formatHits(query, hits), SLACK_MESSAGE_LIMIT)) await respond({ response_type: 'ephemeral', text });
    });
  }

  async start(): Promise<void> {
    if (this.config.appToken) {
      await this.app.start();
      this.logger.info('Slack: connected over Socket Mode');
    } else {
      await this.app.start(this.config.port);
      this.logger.info(`Slack: receiving events on port ${this.config.port} at /slack/events`);
    }
  }

  async stop(): Promise<void> {
    await this.app.stop();
  }

  private allowed(input: Incoming): boolean {
    const { allowedChannels, allowedUsers } = this.config;
    return (!allowedChannels || allowedChannels.includes(input.channel)) && (!allowedUsers || allowedUsers.includes(input.user));
  }

  /** Never throws: whatever fails, the thread hears about it and other threads carry on. */
  private async accept(input: Incoming): Promise<void> {
    const client = this.app.client;
    const thread = input.threadTs ?? input.ts;
    try {
      // Exactly one reply per event, even across retries, restarts and replicas.
      if (!(await this.store.claimEvent('slack', input.eventId))) return;
      if (!this.allowed(input)) {
        await client.chat.postEphemeral({ channel: input.channel, user: input.user, thread_ts: thread, text: "Sorry, I'm not enabled for you in this channel." });
        return;
      }
      const key = { platform: 'slack', workspace: input.team, channel: input.channel, thread };
      await this.queue.run(JSON.stringify(key), async () => {
        const existing = input.known ?? (await this.store.findConversation(key));
        const conversation = existing ?? (await this.store.openConversation(key));
        let text = input.text.replaceAll(`<@${this.botUserId}>`, '').trim();
        if (!existing && input.threadTs && input.threadTs !== input.ts) text = await this.withThreadHistory(client, input, text);
        await this.answer(client, input, conversation, thread, text);
      });
    } catch (error) {
      // The agent reports its own failures as replies; this is Slack or the database failing.
      this.logger.error('Slack: could not handle a message', { error: (error as Error).message });
      await client.chat.postMessage({ channel: input.channel, thread_ts: thread, text: SLACK_FAILURE }).catch(() => {});
    }
  }

  /** Joining a thread mid-way: what was said before Spool was asked, so it has the context. */
  private async withThreadHistory(client: WebClient, input: Incoming, text: string): Promise<string> {
    try {
      const replies = await client.conversations.replies({ channel: input.channel, ts: input.threadTs!, limit: HISTORY_MESSAGES });
      const earlier = (replies.messages ?? []).filter((m) => m.ts !== input.ts && m.text).map((m) => `<@${m.user ?? m.bot_id ?? 'unknown'}>: ${m.text}`);
      return earlier.length ? `Earlier in this Slack thread:\n${earlier.join('\n')}\n\nNew message from <@${input.user}>:\n${text}` : text;
    } catch (error) {
      this.logger.warn('Slack: could not read thread history', { error: (error as Error).message });
      return text;
    }
  }

  private async answer(client: WebClient, input: Incoming, conversation: Conversation, thread: string, text: string): Promise<void> {
    const clearStatus = await this.showStatus(client, input, thread);
    let reply: string;
    try {
      ({ reply } = await this.agent.runTurn(conversation, text || 'Hello!'));
    } finally {
      await clearStatus();
    }
    for (const chunk of toSlackMessages(reply)) {
      const message: SayArguments & { channel: string } = { channel: input.channel, thread_ts: thread, text: chunk, unfurl_links: false };
      await client.chat.postMessage(message);
    }
  }

  /** "is thinking…" in the thread where Slack supports it, else a reaction; returns its undo. */
  private async showStatus(client: WebClient, input: Incoming, thread: string): Promise<() => Promise<void>> {
    if (this.statusApi !== false) {
      try {
        await client.assistant.threads.setStatus({ channel_id: input.channel, thread_ts: thread, status: 'is thinking…' });
        this.statusApi = true;
        return async () => {
          await client.assistant.threads.setStatus({ channel_id: input.channel, thread_ts: thread, status: '' }).catch(() => {});
        };
      } catch {
        this.statusApi = false;
      }
    }
    const reaction = { channel: input.channel, timestamp: input.ts, name: THINKING_REACTION };
    await client.reactions.add(reaction).catch(() => {});
    return async () => {
      await client.reactions.remove(reaction).catch(() => {});
    };
  }
}

export const SLACK_FAILURE = 'Sorry, something went wrong on my side. Please try again.';

export const SLACK_HELP = [
  '*Spool* answers in threads. Mention me in a channel, or message me directly; in a thread I have joined, just keep talking.',
  '• `/spool recall <words>`: earlier tool runs and messages in this channel that match (only you see the answer).',
  '• `/spool help`: this message.',
].join('\n');
