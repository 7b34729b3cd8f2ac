import { createHash } from 'node:crypto';
import { Routes, type REST } from 'discord.js';
import type { InboundMessage, ReplyFile } from '../../core/ports/platform/delivery.ts';
import type { OutgoingChunk } from '../../core/ports/platform/platform.ts';
import type { Logger } from '../../core/logger.ts';

/**
 * A reply's file as discord.js sends it, and the attachment list that makes it the message's only
 * one.
 */
export function attached(file: ReplyFile | undefined): {
  files?: Array<{ name: string; data: Buffer }>;
  attachments: { attachments?: Array<{ id: number; filename: string }> };
} {
  if (!file) return { attachments: {} };
  return {
    files: [{ name: file.name, data: Buffer.from(file.content) }],
    attachments: { attachments: [{ id: 0, filename: file.name }] },
  };
}

/** A channel message's nonce: Discord takes at most 25 characters. */
export const channelNonce = (inboxId: string, part: string) =>
  createHash('sha256').update(`${inboxId}:${part}`).digest('base64url').slice(0, 25);

/**
 * An /ask answer that outlived its interaction token (15 minutes) goes to the channel instead,
 * after a line that tells the person (the one mention it may ping) why it comes this way.
 */
export async function postToChannel(
  rest: REST,
  logger: Logger,
  message: InboundMessage,
  chunk: OutgoingChunk,
  components: unknown[] | undefined,
): Promise<string> {
  logger.warn(
    'Discord: interaction expired before the reply was ready; posting it to the channel',
    {
      interaction: message.messageKey,
    },
  );
  // The same nonce for the same chunk on every attempt: with enforce_nonce, Discord answers a
  // repeat (a crash between posting and recording it) with the message it already created.
  const post = (content: string, part: string, file?: ReplyFile, buttons?: unknown[]) => {
    const { files, attachments } = attached(file);
    const nonce = chunk.inboxId
      ? { nonce: channelNonce(chunk.inboxId, part), enforce_nonce: true }
      : {};
    return rest.post(Routes.channelMessages(message.lane.channel), {
      body: {
        content,
        allowed_mentions: { parse: [], users: [message.user] },
        ...(buttons ? { components: buttons } : {}),
        ...nonce,
        ...attachments,
      },
      files,
    }) as Promise<{ id: string }>;
  };
  if (chunk.seq === 0)
    await post(
      `<@${message.user}>, your \`/ask\` took longer than Discord waits for a reply, so here it is:`,
      'intro',
    );
  return (await post(chunk.text, String(chunk.seq), chunk.file, components)).id;
}

/**
 * A chunk of the answer to a message that mentioned Spool (no interaction token): posted in its
 * channel, the first as a reply to the message, each with a nonce so that a repeat after a crash
 * is the message already created.
 */
export async function replyInChannel(
  rest: REST,
  message: InboundMessage,
  chunk: OutgoingChunk,
  components: unknown[] | undefined,
): Promise<string> {
  const { files, attachments } = attached(chunk.file);
  const nonce = chunk.inboxId
    ? { nonce: channelNonce(chunk.inboxId, String(chunk.seq)), enforce_nonce: true }
    : {};
  const reference =
    chunk.seq <= 0 && message.delivery.messageId
      ? { message_reference: { message_id: message.delivery.messageId, fail_if_not_exists: false } }
      : {};
  const sent = (await rest.post(Routes.channelMessages(message.lane.channel), {
    body: {
      content: chunk.text,
      allowed_mentions: { parse: [] },
      ...nonce,
      ...reference,
      ...attachments,
      ...(components ? { components } : {}),
    },
    files,
  })) as { id: string };
  return sent.id;
}
