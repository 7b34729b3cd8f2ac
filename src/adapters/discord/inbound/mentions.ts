import { GatewayDispatchEvents, GatewayIntentBits, type GatewayDispatchPayload } from 'discord.js';
import { quotedMessage } from '../../../core/delivery/intake/reactions.ts';
import type {
  InboundEdit,
  InboundFile,
  InboundMessage,
} from '../../../core/ports/platform/delivery.ts';
import { errorMessage } from '../../../core/errors.ts';
import type { DiscordParts } from '../parts.ts';
import { DIRECT_MESSAGES } from './inbound.ts';
import { readableMessage } from '../text.ts';

/**
 * The intents Spool asks for, none privileged by default: Guilds (channels and roles stay
 * coherent), and the messages of guilds and DMs; their reactions only where the policy maps an
 * emoji to a prompt (every reaction anywhere is an event). Discord gives a message's words without
 * the Message Content intent when the message mentions the app, and in a DM with it; only a reply
 * to Spool without a mention needs it (DISCORD_MESSAGE_CONTENT, switched on in the Developer
 * Portal too).
 */
export const intentsFor = ({
  messageContent,
  reactions,
}: {
  messageContent?: boolean;
  reactions: boolean;
}) => [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  ...(reactions
    ? [GatewayIntentBits.GuildMessageReactions, GatewayIntentBits.DirectMessageReactions]
    : []),
  ...(messageContent ? [GatewayIntentBits.MessageContent] : []),
];

/** A MESSAGE_CREATE as the gateway sends it: what Spool reads of it. */
interface GatewayMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  content?: string;
  author?: { id: string; bot?: boolean };
  /** 0 a message, 19 a reply; others are Discord's own notices (a pin, a join, a boost). */
  type?: number;
  /** When it was last edited (MESSAGE_UPDATE); none for an update that is no edit (an unfurl). */
  edited_timestamp?: string | null;
  member?: { roles?: string[] };
  mentions?: Array<{ id: string }>;
  mention_roles?: string[];
  attachments?: GatewayAttachment[];
  /** The message this one replies to (type 19); null where it was deleted. */
  referenced_message?: {
    author?: { id: string };
    content?: string;
    attachments?: GatewayAttachment[];
  } | null;
}

/** A file shared with a message, as the gateway lists it. */
interface GatewayAttachment {
  filename: string;
  content_type?: string;
  size: number;
  url: string;
}

/** Who Spool is in a message: its user, and in a guild the role Discord made for it. */
export interface Addressee {
  botId: string;
  /** The bot's managed role in the message's guild (`<@&role>` mentions Spool too). */
  botRoleId?: string;
  /**
   * Whether Spool has the Message Content intent: a reply to Spool without a mention is answered,
   * and the words of a message a mention replies to are read.
   */
  messageContent?: boolean;
}

/** Whether the message mentions Spool, or its role. */
const mentions = (message: GatewayMessage, botId: string, botRoleId: string | undefined) =>
  (message.mentions ?? []).some((m) => m.id === botId) ||
  (botRoleId !== undefined && (message.mention_roles ?? []).includes(botRoleId));

/** Message types a person writes: a message, a reply. */
const WRITTEN = new Set([0, 19]);

/**
 * The message a mention replies to, quoted after the person's words ("@Spool summarize this", sent
 * as a reply): none where it is Spool's own (already in the conversation), deleted, or unknown.
 */
function repliedToSubject(
  message: GatewayMessage,
  botId: string,
  messageContent: boolean,
): string | undefined {
  const replied = message.referenced_message;
  if (!replied?.author || replied.author.id === botId) return undefined;
  return quotedMessage(readableMessage({ ...replied, author: replied.author }, messageContent));
}

const inboundFile = (file: GatewayAttachment): InboundFile => ({
  name: file.filename,
  ...(file.content_type ? { mimeType: file.content_type } : {}),
  sizeBytes: file.size,
  url: file.url,
});

/**
 * A message for Spool, as an inbound message of its channel's lane (the one `/ask` there answers
 * in), keyed by the message: a DM, a message that mentions Spool or its role, or (with
 * `messageContent`) one that replies to Spool's. Its words without the mention, then the message
 * it replies to, quoted; its files as an `/ask`'s. Anything else (a bot's message, a notice, one
 * for someone else) is none.
 */
export function mentionOf(
  message: GatewayMessage,
  { botId, botRoleId, messageContent = false }: Addressee,
): InboundMessage | undefined {
  if (!message.author || message.author.bot) return undefined;
  if (message.type !== undefined && !WRITTEN.has(message.type)) return undefined;
  const inDm = message.guild_id === undefined;
  const repliedTo = messageContent && message.referenced_message?.author?.id === botId;
  if (!inDm && !mentions(message, botId, botRoleId) && !repliedTo) return undefined;
  const ownMention = new RegExp(`<@!?${botId}>${botRoleId ? `|<@&${botRoleId}>` : ''}`, 'g');
  const words = (message.content ?? '').replaceAll(ownMention, '').trim();
  const text = [words, repliedToSubject(message, botId, messageContent)]
    .filter(Boolean)
    .join('\n\n');
  const files = (message.attachments ?? []).map(inboundFile);
  return {
    lane: {
      platform: 'discord',
      workspace: message.guild_id ?? DIRECT_MESSAGES,
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
    ...(files.length ? { files } : {}),
  };
}

/**
 * A person's edit of a message for Spool (a MESSAGE_UPDATE with an `edited_timestamp`), as on
 * Slack: its turn runs again with the new words (core/delivery/posts/edits.ts). An update that is
 * no edit (Discord adding a link's embed), or whose new words are no longer for Spool, is none: the
 * message stands as it was asked.
 */
export function editOf(message: GatewayMessage, addressee: Addressee): InboundEdit | undefined {
  if (!message.edited_timestamp) return undefined;
  const edited = mentionOf(message, addressee);
  if (!edited) return undefined;
  const { lane, messageKey, user, text } = edited;
  return {
    lane,
    messageKey,
    user,
    text,
    editKey: `${messageKey}:edited:${message.edited_timestamp}`,
  };
}

/** A message's deletion (MESSAGE_DELETE, or each of a MESSAGE_DELETE_BULK's): it names nobody. */
export function deletionsOf(d: {
  id?: string;
  ids?: string[];
  channel_id: string;
  guild_id?: string;
}): InboundEdit[] {
  const lane = {
    platform: 'discord',
    workspace: d.guild_id ?? DIRECT_MESSAGES,
    channel: d.channel_id,
    thread: 'main',
  };
  return (d.ids ?? (d.id ? [d.id] : [])).map((id) => ({
    lane,
    messageKey: `message:${id}`,
    editKey: `message:${id}:deleted`,
  }));
}

/**
 * Each MESSAGE_CREATE the gateway sends (read raw: no channel needs to be cached) that is for
 * Spool goes to the delivery engine, like an `/ask`; each MESSAGE_UPDATE that edits one, as an
 * edit; each deletion, as one (a turn not yet answered ends with nothing posted). Never throws.
 */
export function listenForMentions({ client, config, delivery, logger }: DiscordParts): void {
  client.on('raw', (packet: GatewayDispatchPayload) => {
    if (
      packet.t === GatewayDispatchEvents.MessageDelete ||
      packet.t === GatewayDispatchEvents.MessageDeleteBulk
    ) {
      for (const deletion of deletionsOf(packet.d))
        void delivery
          .editIncoming(deletion)
          .catch((error: unknown) =>
            logger.error('Discord: a deletion could not be taken', { error: errorMessage(error) }),
          );
      return;
    }
    const created = packet.t === GatewayDispatchEvents.MessageCreate;
    if (!created && packet.t !== GatewayDispatchEvents.MessageUpdate) return;
    const botId = client.user?.id;
    if (!botId) return;
    const d = packet.d as unknown as GatewayMessage;
    const guild = d.guild_id ? client.guilds.cache.get(d.guild_id) : undefined;
    const botRoleId = guild?.roles.botRoleFor(botId)?.id;
    const addressee = { botId, botRoleId, messageContent: config.messageContent };
    const message = created ? mentionOf(d, addressee) : undefined;
    const edit = created ? undefined : editOf(d, addressee);
    const taken = message
      ? delivery.handleIncoming(message)
      : edit &&
        delivery.editIncoming(edit).then((outcome) => {
          logger.debug('Discord: an edit', { outcome });
        });
    void taken?.catch((error: unknown) =>
      logger.error('Discord: a mention could not be taken', { error: errorMessage(error) }),
    );
  });
}
