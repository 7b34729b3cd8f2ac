import { DiscordAPIError, Routes, type REST } from 'discord.js';
import { ChannelGoneError, type InboundMessage } from '../../core/ports/platform/delivery.ts';
import type { OutgoingChunk } from '../../core/ports/platform/platform.ts';
import { attached, channelNonce } from './channel-post.ts';
import { NO_MENTIONS } from './text.ts';

/** Unknown Channel, Missing Access, Missing Permissions: Spool cannot post there any more. */
const CHANNEL_GONE_CODES = new Set([10003, 50001, 50013]);

/**
 * A scheduled run: neither an interaction nor a person's message asked for it, and it runs in the
 * thread its header started (`lane.thread`, a Discord thread being a channel of its own).
 */
export const isScheduledRun = ({ delivery }: InboundMessage) =>
  !delivery.token && !delivery.messageId;

/** A thread's name: Discord takes at most 100 characters. */
const threadName = (text: string) => text.split('\n')[0]!.slice(0, 100);

/**
 * A scheduled run's header as a message in the channel, and a thread on it, where the run
 * answers: the thread's id (a Discord thread is a channel of its own).
 */
export async function startThread(
  rest: REST,
  { lane }: InboundMessage,
  text: string,
): Promise<string> {
  try {
    const header = (await rest.post(Routes.channelMessages(lane.channel), {
      body: { content: text, allowed_mentions: NO_MENTIONS },
    })) as { id: string };
    const thread = (await rest.post(Routes.threads(lane.channel, header.id), {
      body: { name: threadName(text) },
    })) as { id: string };
    return thread.id;
  } catch (error) {
    if (
      error instanceof DiscordAPIError &&
      typeof error.code === 'number' &&
      CHANNEL_GONE_CODES.has(error.code)
    )
      throw new ChannelGoneError(error.message);
    throw error;
  }
}

/**
 * One chunk of a reply no interaction asked for (a scheduled run), as a message in its thread;
 * the same nonce on every attempt, so a repeat after a crash is the message Discord made already.
 */
export async function postInThread(
  rest: REST,
  { lane }: InboundMessage,
  chunk: OutgoingChunk,
  components: unknown[] | undefined,
): Promise<string> {
  const { files, attachments } = attached(chunk.file);
  const nonce = chunk.inboxId
    ? { nonce: channelNonce(chunk.inboxId, String(chunk.seq)), enforce_nonce: true }
    : {};
  const sent = (await rest.post(Routes.channelMessages(lane.thread), {
    body: {
      content: chunk.text,
      allowed_mentions: NO_MENTIONS,
      ...(components ? { components } : {}),
      ...nonce,
      ...attachments,
    },
    files,
  })) as { id: string };
  return sent.id;
}

/** A direct message to a person (a schedule of theirs paused). */
export async function tell(rest: REST, user: string, text: string): Promise<void> {
  const dm = (await rest.post(Routes.userChannels(), { body: { recipient_id: user } })) as {
    id: string;
  };
  await rest.post(Routes.channelMessages(dm.id), {
    body: { content: text, allowed_mentions: NO_MENTIONS },
  });
}
