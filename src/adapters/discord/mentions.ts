import { GatewayDispatchEvents, GatewayIntentBits, type GatewayDispatchPayload } from 'discord.js';
import type { InboundMessage } from '../../core/ports/delivery.ts';
import { errorMessage } from '../../core/errors.ts';
import type { DiscordParts } from './parts.ts';

/**
 * The intents Spool asks for: Guilds always (channels and roles stay coherent); with
 * DISCORD_MESSAGE_CONTENT, the messages of guilds and DMs and their words (Message Content is
 * privileged: it must be switched on in the Developer Portal too).
 */
export const intentsFor = (messageContent: boolean | undefined) => [
  GatewayIntentBits.Guilds,
  ...(messageContent
    ? [
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ]
    : []),
];

/** A MESSAGE_CREATE as the gateway sends it: what Spool reads of it. */
interface GatewayMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  content?: string;
  author?: { id: string; bot?: boolean };
  member?: { roles?: string[] };
  mentions?: Array<{ id: string }>;
  referenced_message?: { author?: { id: string } } | null;
}

/**
 * A message that mentions Spool or replies to one of Spool's, as an inbound message of its
 * channel's lane (the one `/ask` there answers in), keyed by the message; its words without the
 * mention. Anything else (a bot's message, one for someone else) is none.
 */
export function mentionOf(message: GatewayMessage, botId: string): InboundMessage | undefined {
  if (!message.author || message.author.bot) return undefined;
  const mentioned = message.mentions?.some((m) => m.id === botId) ?? false;
  const repliedTo = message.referenced_message?.author?.id === botId;
  if (!mentioned && !repliedTo) return undefined;
  const text = (message.content ?? '').replaceAll(new RegExp(`<@!?${botId}>`, 'g'), '').trim();
  return {
    lane: {
      platform: 'discord',
      workspace: message.guild_id ?? 'dm',
      channel: message.channel_id,
      thread: 'main',
    },
    messageKey: `message:${message.id}`,
    kind: 'message',
    user: message.author.id,
    roles: message.member?.roles ?? [],
    text,
    // No interaction token: the answer is posted in the channel, as a reply to the message.
    delivery: { messageId: message.id },
  };
}

/**
 * With DISCORD_MESSAGE_CONTENT, each MESSAGE_CREATE the gateway sends (read raw: no channel needs
 * to be cached) that is for Spool goes to the delivery engine, like an `/ask`. Never throws.
 */
export function listenForMentions({ client, config, delivery, logger }: DiscordParts): void {
  if (!config.messageContent) return;
  client.on('raw', (packet: GatewayDispatchPayload) => {
    if (packet.t !== GatewayDispatchEvents.MessageCreate) return;
    const botId = client.user?.id;
    const message = botId && mentionOf(packet.d as unknown as GatewayMessage, botId);
    if (!message) return;
    void delivery
      .handleIncoming(message)
      .catch((error: unknown) =>
        logger.error('Discord: a mention could not be taken', { error: errorMessage(error) }),
      );
  });
}
