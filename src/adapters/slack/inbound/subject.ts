import type { WebClient } from '@slack/web-api';
import { quotedMessage, type ReactedMessage } from '../../../core/delivery/intake/reactions.ts';
import { slackText, type SlackEvent } from './message.ts';

/** A channel message a request is about: its thread, what it says (as read), and who wrote it. */
export interface Subject extends ReactedMessage {
  thread: string;
}

/** The message at `ts` in the channel, top-level or in a thread; none where it cannot be read. */
export async function messageAt(
  client: WebClient,
  channel: string,
  ts: string,
): Promise<Subject | undefined> {
  const found = await client.conversations
    .replies({ channel, ts, latest: ts, inclusive: true, limit: 200 })
    .catch(() => undefined);
  const message = found?.messages?.find((m) => m.ts === ts);
  if (!message) return undefined;
  return {
    thread: message.thread_ts ?? ts,
    text: slackText(message.text ?? ''),
    author: message.user ?? message.bot_id ?? 'unknown',
  };
}

/**
 * The channel message a message in Slack's agent view is about: the first
 * `slack#/types/message_context` of its `app_context.entities` (what the person had open when they
 * wrote "summarize this"), or none.
 */
function viewedMessage(event: SlackEvent): { channel: string; ts: string } | undefined {
  const context = event.app_context as { entities?: unknown } | undefined;
  if (!Array.isArray(context?.entities)) return undefined;
  for (const entity of context.entities as Array<{ type?: unknown; value?: unknown }>) {
    if (entity?.type !== 'slack#/types/message_context') continue;
    const value = entity.value as { channel_id?: unknown; message_ts?: unknown } | undefined;
    if (typeof value?.channel_id === 'string' && typeof value.message_ts === 'string')
      return { channel: value.channel_id, ts: value.message_ts };
  }
  return undefined;
}

/**
 * What the model reads of the message the person had open in the agent view, after their words:
 * the message quoted, fetched with the workspace's token, only where the person is a member of
 * its channel; nothing where there is none, or it cannot be read.
 */
export async function viewedSubject(
  client: WebClient,
  event: SlackEvent,
  user: string,
): Promise<string | undefined> {
  const viewed = viewedMessage(event);
  if (!viewed || !(await memberOf(client, viewed.channel, user))) return undefined;
  const subject = await messageAt(client, viewed.channel, viewed.ts);
  return subject && quotedMessage(subject);
}

/**
 * Whether the person is a member of the channel, so may read what Spool would fetch from it with
 * its own token. Membership, not "the channel is public": a guest reads only the channels they are
 * in, and the entity is the client's word, not Slack's check.
 */
async function memberOf(client: WebClient, channel: string, user: string): Promise<boolean> {
  let cursor: string | undefined;
  do {
    const page = await client.conversations
      .members({ channel, limit: 1000, ...(cursor ? { cursor } : {}) })
      .catch(() => undefined);
    if (!page?.members) return false;
    if (page.members.includes(user)) return true;
    cursor = page.response_metadata?.next_cursor || undefined;
  } while (cursor);
  return false;
}
