import { InteractionResponseType, MessageFlags, Routes, type REST } from 'discord.js';
import {
  FileRefusedError,
  type InboundMessage,
  type ReplyLink,
} from '../../core/ports/platform/delivery.ts';
import type { OutgoingChunk, Outbound } from '../../core/ports/platform/platform.ts';
import type { Logger } from '../../core/logger.ts';
import { fetchFileBytes, servedFrom } from '../shared/fetch-file.ts';
import { discordAnswer, isExpired, refusesFile } from './api-errors.ts';
import { attached, postToChannel, replyInChannel } from './channel-post.ts';
import {
  approvalComponents,
  feedbackComponents,
  linkComponents,
  stopComponents,
} from './interactions/components.ts';
import { formComponents } from './interactions/form-modal.ts';
import { RunStatus } from './run-status.ts';
import { isScheduledRun, postInThread, startThread, tell } from './threads.ts';
import type { DiscordAdapterConfig, DiscordParts } from './parts.ts';
import { DISCORD_REFUSAL, discordChunks, NO_MENTIONS, workingLine } from './text.ts';

/** Where Discord serves attachments. */
const DISCORD_CDN_ORIGINS = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];
const WAITING_FOR_APPROVAL = 'Waiting for an approver…';
const WAITING_FOR_ANSWER = 'Waiting for your answer…';

/** The interaction's deferred response (`@original`), or another message of its webhook. */
const webhookMessage = ({ delivery }: InboundMessage, messageId = '@original') =>
  Routes.webhookMessage(delivery.applicationId!, delivery.token!, messageId);

/**
 * Outbound, what Discord does for the delivery engine, over REST with the interaction token kept
 * in the inbox (any replica can deliver): the reply edits the deferred response, then follows up;
 * prompts carry buttons; the deferred response shows the status, with Stop, until the reply
 * replaces it. A reply that outlives the token goes to the channel (channel-post.ts).
 */
export function discordOutbound({ client, config, logger }: DiscordParts): Outbound {
  const rest = client.rest;
  const runStatus = new RunStatus(rest);
  return {
    render: discordChunks,
    postsFiles: true,
    post: async (message, chunk) => {
      try {
        // A scheduled run, which no interaction asked for, is answered in the thread its header
        // started; a mention or a reaction, in its channel.
        if (isScheduledRun(message))
          return await postInThread(rest, message, chunk, componentsOf(chunk));
        if (!message.delivery.token)
          return await replyInChannel(rest, message, chunk, componentsOf(chunk));
        return await postChunk(rest, logger, message, chunk);
      } catch (error) {
        // The file is what Discord will not take: the delivery engine posts the reply as messages
        // instead.
        if (chunk.file && refusesFile(error)) throw new FileRefusedError(discordAnswer(error));
        throw error;
      }
    },
    // The text alone: the buttons go, but for an answer's links, 👍 and 👎.
    edit: async (message, messageId, chunk) => {
      const components = answerComponents(chunk);
      const body = { content: chunk.text, components, allowed_mentions: NO_MENTIONS };
      // The answer to a mention is the bot's own channel message, a scheduled run's its thread's;
      // an /ask's, the webhook's.
      if (!message.delivery.token) {
        const where = message.delivery.messageId ? message.lane.channel : message.lane.thread;
        await rest.patch(Routes.channelMessage(where, messageId), { body });
      } else await rest.patch(webhookMessage(message, messageId), { body, auth: false });
    },
    startThread: (message, text) => startThread(rest, message, text),
    tell: ({ user }, text) => tell(rest, user, text),
    refuse: async ({ delivery }) => {
      // A mention has no private way back: not answering is the refusal.
      if (!delivery.interactionId) return;
      const body = {
        type: InteractionResponseType.ChannelMessageWithSource,
        data: { content: DISCORD_REFUSAL, flags: MessageFlags.Ephemeral },
      };
      await rest.post(Routes.interactionCallback(delivery.interactionId!, delivery.token!), {
        body,
        auth: false,
      });
    },
    // An ephemeral follow-up of the interaction: only the person who asked sees it. A mention has
    // no interaction, and Discord no other private message in a channel: nothing is shown.
    showPrivately: (message, text, link) => showPrivately(rest, message, text, link),
    // The deferral already shows "Spool is thinking…" until the reply replaces it; a scheduled
    // run gets a status message of its own, with Stop; a mention gets Discord's typing indicator
    // (it lasts ten seconds, or until Spool posts).
    showWorking: async (message) => {
      if (isScheduledRun(message)) return runStatus.show(message);
      if (!message.delivery.token)
        await rest.post(Routes.channelTyping(message.lane.channel)).catch(() => {});
      return async () => {};
    },
    // The deferred response ("thinking…"), or a scheduled run's status message, says what Spool is
    // doing, with Stop, until the reply comes.
    showStatus: async (message, status) => {
      if (isScheduledRun(message)) return runStatus.update(message, status);
      if (!message.delivery.token) return;
      await rest.patch(webhookMessage(message), {
        body: { content: workingLine(status), components: stopComponents(message.messageKey) },
        auth: false,
      });
    },
    fetchFile: async (_message, file, maxBytes, signal) => {
      if (!file.url || !servedFrom(file.url, cdnOrigins(config)))
        throw new Error("it is not on Discord's CDN");
      return fetchFileBytes(file.url, { maxBytes, signal, dispatcher: config.dispatcher });
    },
  };
}

/**
 * Attachment URLs are signed by Discord: nothing of the bot's goes with them, and only Discord's
 * CDN (or the REST API's own host, where one is set) is asked.
 */
const cdnOrigins = (config: DiscordAdapterConfig) => [
  ...DISCORD_CDN_ORIGINS,
  ...(config.apiUrl ? [new URL(config.apiUrl).origin] : []),
];

/** An answer's buttons: its links, then, under its last message, 👍 and 👎. */
const answerComponents = (chunk: OutgoingChunk): unknown[] => [
  ...linkComponents(chunk.links),
  ...(chunk.feedback && chunk.inboxId ? feedbackComponents(chunk.inboxId) : []),
];

/** A chunk's buttons: a prompt's, or an answer's. */
function componentsOf(chunk: OutgoingChunk): unknown[] | undefined {
  if (chunk.approval) return approvalComponents(chunk.approval);
  if (chunk.form) return formComponents(chunk.form);
  const components = answerComponents(chunk);
  return components.length > 0 ? components : undefined;
}

/** One chunk, by the interaction's token: the deferred response first, then follow-ups. */
async function postChunk(
  rest: REST,
  logger: Logger,
  message: InboundMessage,
  chunk: OutgoingChunk,
): Promise<string> {
  const { applicationId, token } = message.delivery;
  // A file replaces the message's attachments: editing the original again never adds a second.
  const { files, attachments } = attached(chunk.file);
  const components = componentsOf(chunk);
  const body = {
    content: chunk.text,
    allowed_mentions: NO_MENTIONS,
    ...attachments,
    ...(components ? { components } : {}),
  };
  try {
    // The first follow-up of a deferred response takes the response's place: the prompt
    // must be a message of its own, edited once decided, so the response says it waits.
    // Stop stays while a question holds the turn; a parked approval has no turn running.
    if (chunk.approval || chunk.form)
      await rest.patch(webhookMessage(message), {
        body: chunk.approval
          ? { content: WAITING_FOR_APPROVAL, components: [] }
          : { content: WAITING_FOR_ANSWER, components: stopComponents(message.messageKey) },
        auth: false,
      });
    const sent =
      chunk.seq === 0
        ? await rest.patch(webhookMessage(message), {
            // The reply takes the working line's place, and its Stop button goes with it.
            body: { components: [], ...body },
            files,
            auth: false,
          })
        : await rest.post(Routes.webhook(applicationId!, token!), { body, files, auth: false });
    return (sent as { id: string }).id;
  } catch (error) {
    // Only /ask outlives its token publicly; anything else would leak or make no sense in the
    // channel.
    if (!isExpired(error) || message.kind !== 'message') throw error;
    return postToChannel(rest, logger, message, chunk, components);
  }
}

/** An ephemeral follow-up with a link button, where the message came with an interaction. */
async function showPrivately(
  rest: REST,
  { delivery }: InboundMessage,
  text: string,
  link: ReplyLink,
): Promise<void> {
  if (!delivery.token) return;
  const body = {
    content: text,
    flags: MessageFlags.Ephemeral,
    allowed_mentions: NO_MENTIONS,
    components: linkComponents([link]),
  };
  await rest.post(Routes.webhook(delivery.applicationId!, delivery.token), { body, auth: false });
}
