import { MessageFlags, type ChatInputCommandInteraction } from 'discord.js';
import { handledReply } from '../../../core/delivery/intake/handled-reply.ts';
import type {
  InboundFile,
  InboundKind,
  InboundMessage,
} from '../../../core/ports/platform/delivery.ts';
import type { Asker, Delivery } from '../../../core/ports/platform/platform.ts';
import type { DiscordParts, PersonInteraction } from '../parts.ts';
import { discordChunks } from '../text.ts';

/** The workspace a message outside any server is recorded under: a direct message's. */
export const DIRECT_MESSAGES = 'dm';

/**
 * Who asked or clicked, and where: the channel (or thread) is the lane; its conversation is
 * whichever `/new` made current.
 */
export function askerOf(interaction: PersonInteraction): Asker {
  const roles = interaction.member?.roles;
  return {
    lane: {
      platform: 'discord',
      workspace: interaction.guildId ?? DIRECT_MESSAGES,
      channel: interaction.channelId ?? '',
      thread: 'main',
    },
    user: interaction.user.id,
    roles: Array.isArray(roles) ? roles : roles ? [...roles.cache.keys()] : [],
  };
}

/**
 * A slash command as an inbound message: keyed by the interaction, with the token any replica
 * answers it with (over REST) kept in the inbox.
 */
export function inboundOf(
  interaction: ChatInputCommandInteraction,
  kind: InboundKind,
  text: string,
): InboundMessage {
  return {
    ...askerOf(interaction),
    messageKey: interaction.id,
    kind,
    text,
    delivery: {
      interactionId: interaction.id,
      token: interaction.token,
      applicationId: interaction.applicationId,
    },
  };
}

/**
 * Into the inbox, and the deferral once it is there: Discord wants an answer within 3 seconds, and
 * the deferral says "thinking" until the reply. A message that can never be stored is not
 * acknowledged: its sender hears what was wrong with it.
 */
async function take(
  delivery: Delivery,
  interaction: ChatInputCommandInteraction,
  message: InboundMessage,
): Promise<void> {
  const acknowledge = async () => void (await interaction.deferReply());
  const reply = handledReply(await delivery.handleIncoming(message, { acknowledge }));
  if (reply) await interaction.reply({ content: reply, flags: MessageFlags.Ephemeral });
}

/** `/ask prompt:<text> [file:<attachment>]`: the prompt is the message, the file shared with it. */
export async function ask({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const file = interaction.options.getAttachment('file');
  const files: InboundFile[] = file
    ? [
        {
          name: file.name,
          mimeType: file.contentType ?? undefined,
          sizeBytes: file.size,
          url: file.url,
        },
      ]
    : [];
  const prompt = interaction.options.getString('prompt', true);
  await take(delivery, interaction, {
    ...inboundOf(interaction, 'message', prompt),
    ...(files.length ? { files } : {}),
  });
}

/**
 * `/prompt server:… name:… arguments:…`: the server's prompt, as the text of an `/ask`; a wrong
 * name, or a prompt that cannot be given, is told only to the person (with the prompts on offer).
 */
export async function askWithPrompt(
  { delivery }: DiscordParts,
  interaction: ChatInputCommandInteraction,
) {
  const command = ['server', 'name', 'arguments']
    .map((option) => interaction.options.getString(option) ?? '')
    .join(' ');
  const asked = await delivery.promptText(askerOf(interaction), command);
  if ('problem' in asked)
    return void (await interaction.reply({
      content: discordChunks(asked.problem)[0]!,
      flags: MessageFlags.Ephemeral,
    }));
  await take(delivery, interaction, inboundOf(interaction, 'message', asked.text));
}

/** `/new`: a message of the lane that makes a fresh conversation current, in order. */
export const startOver = ({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) =>
  take(delivery, interaction, inboundOf(interaction, 'new_conversation', '/new'));
