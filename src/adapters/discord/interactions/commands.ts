import { MessageFlags, type ChatInputCommandInteraction } from 'discord.js';
import { commandFailureReply, sayingSlow } from '../../../core/delivery/commands/commands.ts';
import { namingFor } from '../../../core/delivery/commands/naming.ts';
import { resultAsFile, resultAsMessages } from '../../../core/delivery/commands/stored-result.ts';
import { recallAnswer } from '../../../core/delivery/commands/typed-command.ts';
import { chartRefusedNote, platformRefusedReply } from '../../../core/delivery/posts/replies.ts';
import { errorMessage } from '../../../core/errors.ts';
import { usageChartPng } from '../../shared/chart.ts';
import { discordAnswer, refusesFile } from '../api-errors.ts';
import { linkComponents } from './components.ts';
import { askerOf, ask, askWithPrompt, startOver } from '../inbound/inbound.ts';
import type { DiscordParts } from '../parts.ts';
import { DISCORD_HELP, DISCORD_REFUSAL, discordChunks, NO_MENTIONS } from '../text.ts';

/** A command not answered by then is deferred: Discord takes no answer after 3 s. */
const DEFER_AFTER_MS = 2_000;

type Command = (parts: DiscordParts, interaction: ChatInputCommandInteraction) => Promise<void>;

/**
 * The slash commands by name: `/ask`, `/prompt` and `/new` become messages of the channel's lane
 * (inbound.ts); `/recall`, `/result`, `/usage`, `/schedule`, `/login`, `/logins` and `/logout`
 * are answered at once, only to the person.
 * Anything else gets the help.
 */
const COMMANDS = new Map<string, Command>([
  ['ask', ask],
  ['prompt', askWithPrompt],
  ['new', startOver],
  ['recall', recall],
  ['result', result],
  ['usage', usage],
  ['login', login],
  ['logins', logins],
  ['logout', logout],
  ['schedule', schedule],
]);

/** Never throws: whatever fails, the person hears about it and other channels carry on. */
export async function answerCommand(
  parts: DiscordParts,
  interaction: ChatInputCommandInteraction,
): Promise<void> {
  try {
    await (COMMANDS.get(interaction.commandName) ?? help)(parts, interaction);
  } catch (error) {
    parts.logger.error('Discord: interaction failed', { error: errorMessage(error) });
    // Discord does not send an interaction again: the user must, and hears so plainly; where
    // Discord refused the answer for good, what it said, and no "try again".
    const content = refusesFile(error)
      ? platformRefusedReply('Discord', discordAnswer(error))
      : commandFailureReply(error);
    const answer =
      interaction.deferred || interaction.replied
        ? interaction.editReply({ content })
        : interaction.reply({ content, flags: MessageFlags.Ephemeral });
    await answer.catch((error: unknown) =>
      parts.logger.warn('Discord: could not tell the user', { error: errorMessage(error) }),
    );
  }
}

async function help(_parts: DiscordParts, interaction: ChatInputCommandInteraction) {
  await interaction.reply({ content: DISCORD_HELP, flags: MessageFlags.Ephemeral });
}

/**
 * `work`, with the interaction deferred (privately) if it takes long enough that Discord's 3 s to
 * answer would otherwise pass.
 */
function inTime<T>(interaction: ChatInputCommandInteraction, work: Promise<T>): Promise<T> {
  return sayingSlow(work, DEFER_AFTER_MS, () =>
    interaction.deferReply({ flags: MessageFlags.Ephemeral }),
  );
}

/** A private answer: the reply, or the deferred response's edit once `inTime` deferred. */
async function replyPrivately(
  interaction: ChatInputCommandInteraction,
  message: {
    content: string;
    files?: Array<{ attachment: Buffer; name: string }>;
    components?: ReturnType<typeof linkComponents>;
  },
): Promise<void> {
  await (interaction.deferred
    ? interaction.editReply(message)
    : interaction.reply({ ...message, flags: MessageFlags.Ephemeral }));
}

/** The deferred response's edit, then private follow-ups for the rest; nobody is pinged. */
async function editThenFollowUp(
  interaction: ChatInputCommandInteraction,
  [first, ...rest]: string[],
  files?: Array<{ attachment: Buffer; name: string }>,
): Promise<void> {
  await interaction.editReply({
    content: first!,
    allowedMentions: NO_MENTIONS,
    ...(files ? { files } : {}),
  });
  for (const content of rest)
    await interaction.followUp({
      content,
      flags: MessageFlags.Ephemeral,
      allowedMentions: NO_MENTIONS,
    });
}

/** `/recall query:<text>`: private results, never the public channel fallback. */
async function recall({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const query = interaction.options.getString('query', true);
  const text = await inTime(interaction, recallAnswer(delivery, askerOf(interaction), query));
  if (text === undefined) return replyPrivately(interaction, { content: DISCORD_REFUSAL });
  if (!interaction.deferred) await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  await editThenFollowUp(interaction, discordChunks(text));
}

/**
 * `/usage`, only to the person: the text and the last 30 days as a chart; where Discord refuses
 * the chart (too large, no Attach Files), the text alone, saying why, as a refused reply file is.
 */
async function usage({ delivery, logger }: DiscordParts, interaction: ChatInputCommandInteraction) {
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const report = await delivery.usage(askerOf(interaction), namingFor('discord'));
  if (report === 'refused') return void (await interaction.editReply({ content: DISCORD_REFUSAL }));
  try {
    await editThenFollowUp(interaction, discordChunks(report.text), [
      { attachment: usageChartPng(report.days, report.currency), name: 'usage.png' },
    ]);
  } catch (error) {
    if (!refusesFile(error)) throw error;
    logger.warn('Discord: the usage chart was refused; the report goes as text', {
      reason: discordAnswer(error),
    });
    const note = `_(${chartRefusedNote(discordAnswer(error))})_`;
    await editThenFollowUp(interaction, discordChunks(`${report.text}\n\n${note}`));
  }
}

/** `/login server:<server>`: a sign-in link only the person sees. */
async function login({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const server = interaction.options.getString('server', true);
  const text = await inTime(interaction, delivery.login(askerOf(interaction), server));
  await replyPrivately(interaction, { content: text === 'refused' ? DISCORD_REFUSAL : text });
}

/** `/logins`: the person's sign-ins to tool servers (everyone's, for an admin), only to them. */
async function logins({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const text = await inTime(
    interaction,
    delivery.logins(askerOf(interaction), namingFor('discord')),
  );
  await replyPrivately(interaction, { content: text === 'refused' ? DISCORD_REFUSAL : text });
}

/** `/logout server:<server> [person:<user>]`: ends the person's sign-in (an admin: anyone's). */
async function logout({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const server = interaction.options.getString('server', true);
  const whose = interaction.options.getUser('person')?.id ?? '';
  const asked = delivery.logout(askerOf(interaction), `${server} ${whose}`, namingFor('discord'));
  const text = await inTime(interaction, asked);
  await replyPrivately(interaction, { content: text === 'refused' ? DISCORD_REFUSAL : text });
}

/** `/result id:<tool_call_id>`: the whole stored result as a file only the person sees. */
async function result({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const id = interaction.options.getString('id', true);
  const found = await inTime(interaction, delivery.result(askerOf(interaction), id));
  if (found === 'refused') return replyPrivately(interaction, { content: DISCORD_REFUSAL });
  const part = resultAsFile(id, found);
  if (!part.file) return replyPrivately(interaction, { content: part.text });
  try {
    await replyPrivately(interaction, {
      content: part.text,
      files: [{ attachment: Buffer.from(part.file.content), name: part.file.name }],
      ...(part.links ? { components: linkComponents(part.links) } : {}),
    });
  } catch (error) {
    if (!refusesFile(error)) throw error;
    // Refused, the interaction is still unanswered: the result goes as private messages, 10 at
    // most (the first says why, and how much is left out; the whole result stays stored).
    const [first, ...rest] = resultAsMessages(
      { ...part, file: part.file },
      discordAnswer(error),
      discordChunks,
      9,
    );
    await replyPrivately(interaction, {
      content: first!,
      ...(part.links ? { components: linkComponents(part.links) } : {}),
    });
    for (const content of rest)
      await interaction.followUp({ content, flags: MessageFlags.Ephemeral });
  }
}

/**
 * `/schedule what:<"rule" prompt | list | cancel id>`, only to the person (times in
 * SCHEDULE_TIME_ZONE).
 */
async function schedule({ delivery }: DiscordParts, interaction: ChatInputCommandInteraction) {
  const words = interaction.options.getString('what') ?? '';
  const answer = await inTime(interaction, delivery.schedule(askerOf(interaction), words));
  await replyPrivately(interaction, { content: discordChunks(answer ?? DISCORD_REFUSAL)[0]! });
}
