import {
  GatewayDispatchEvents,
  Routes,
  type APIGuildMember,
  type APIMessage,
  type GatewayDispatchPayload,
  type GatewayMessageReactionAddDispatchData,
  type GatewayMessageReactionRemoveDispatchData,
} from 'discord.js';
import {
  reactionKey,
  reactionPrompt,
  reactionRequest,
  type Reaction,
} from '../../../core/delivery/intake/reactions.ts';
import { errorMessage } from '../../../core/errors.ts';
import type { DiscordParts } from '../parts.ts';
import { DIRECT_MESSAGES } from './inbound.ts';
import { readableMessage } from '../text.ts';

type ReactionEvent =
  GatewayMessageReactionAddDispatchData | GatewayMessageReactionRemoveDispatchData;

/**
 * Reactions as requests (core/delivery/intake/reactions.ts), from the gateway's
 * MESSAGE_REACTION_ADD and MESSAGE_REACTION_REMOVE, read raw as mentions are (no channel or
 * message needs to be cached): the request is answered in the message's channel (or thread), as a
 * reply to it, like a mention; taking the emoji off stops its turn if it still runs. Never throws.
 */
export function listenForReactions(parts: DiscordParts): void {
  parts.client.on('raw', (packet: GatewayDispatchPayload) => {
    const taken =
      packet.t === GatewayDispatchEvents.MessageReactionAdd
        ? added(parts, packet.d)
        : packet.t === GatewayDispatchEvents.MessageReactionRemove
          ? removed(parts, packet.d)
          : undefined;
    void taken?.catch((error: unknown) =>
      parts.logger.error('Discord: a reaction could not be taken', { error: errorMessage(error) }),
    );
  });
}

/**
 * The reaction, with the prompt the channel's policy maps its emoji to; none for an emoji no prompt
 * is mapped to. A Unicode emoji is named by itself (`👍`), a server's own emoji by its name.
 */
function mapped(
  { config }: DiscordParts,
  d: ReactionEvent,
  roles: string[] | undefined,
): { reaction: Reaction; prompt: string } | undefined {
  const emoji = d.emoji.name;
  if (!emoji) return undefined;
  const lane = {
    platform: 'discord',
    workspace: d.guild_id ?? DIRECT_MESSAGES,
    channel: d.channel_id,
    thread: 'main',
  };
  const prompt = reactionPrompt(config.policy, lane, emoji);
  if (!prompt) return undefined;
  const on = `${d.channel_id}:${d.message_id}`;
  return { reaction: { lane, user: d.user_id, ...(roles ? { roles } : {}), emoji, on }, prompt };
}

/** A person's mapped emoji: the message is read and quoted, and the request answered as a reply. */
async function added(parts: DiscordParts, d: GatewayMessageReactionAddDispatchData) {
  if (d.member?.user.bot || d.user_id === parts.client.user?.id) return;
  const asked = mapped(parts, d, d.member?.roles ?? []);
  if (!asked) return;
  const { client, config, delivery, logger } = parts;
  const message = (await client.rest
    .get(Routes.channelMessage(d.channel_id, d.message_id))
    .catch(() => undefined)) as APIMessage | undefined;
  if (!message) {
    logger.warn('Discord: could not read the message a reaction is on', { channel: d.channel_id });
    return;
  }
  const request = reactionRequest(
    asked.reaction,
    asked.prompt,
    readableMessage(message, config.messageContent === true),
    {
      messageId: d.message_id,
    },
  );
  const handled = await delivery.handleIncoming(request);
  logger.debug('Discord: a reaction', { outcome: handled.status });
}

/**
 * A mapped emoji taken off: its request's turn stops. The event names no roles: where the
 * allow-lists go by role, the person's are asked for.
 */
async function removed(parts: DiscordParts, d: GatewayMessageReactionRemoveDispatchData) {
  const { client, config, delivery, logger } = parts;
  const roles =
    d.guild_id && config.allowedRoles?.length
      ? (
          (await client.rest
            .get(Routes.guildMember(d.guild_id, d.user_id))
            .catch(() => undefined)) as APIGuildMember | undefined
        )?.roles
      : [];
  const asked = mapped(parts, d, roles ?? []);
  if (!asked) return;
  const outcome = await delivery.stopTurn(asked.reaction, reactionKey(asked.reaction));
  logger.debug('Discord: a reaction taken back', { outcome });
}
