import {
  PermissionFlagsBits,
  Routes,
  SlashCommandBuilder,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { DiscordParts } from '../parts.ts';

/**
 * Only for what no interaction carries, posted to the channel: replies that outlive an
 * interaction, mentions, reactions and scheduled runs. View Channel (which a private channel needs
 * before anything can be posted there), Send Messages, Send Messages in Threads, Create Public
 * Threads (a run's thread), Read Message History (the message a reaction is on).
 */
const INVITE_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.CreatePublicThreads |
  PermissionFlagsBits.ReadMessageHistory;

export const DISCORD_COMMANDS: RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  new SlashCommandBuilder()
    .setName('ask')
    .setDescription('Ask Spool; later /ask calls here continue the conversation')
    .addStringOption((o) =>
      o
        .setName('prompt')
        .setDescription('What you want to ask')
        .setRequired(true)
        .setMaxLength(4000),
    )
    .addAttachmentOption((o) =>
      o
        .setName('file')
        .setDescription('A file to ask about: a log, a CSV, code, a PDF')
        .setRequired(false),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('recall')
    .setDescription('Find earlier tool runs and messages in this channel')
    .addStringOption((o) =>
      o.setName('query').setDescription('Words to look for').setRequired(true),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('result')
    .setDescription('The whole result of a tool run that /recall found, as a file only you see')
    .addStringOption((o) =>
      o.setName('id').setDescription('The tool_call_id /recall shows').setRequired(true),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('prompt')
    .setDescription('Ask with a prompt a tool server offers; /prompt with a wrong name lists them')
    .addStringOption((o) =>
      o.setName('server').setDescription('The tool server, as mcp.json names it').setRequired(true),
    )
    .addStringOption((o) =>
      o.setName('name').setDescription("The server's prompt").setRequired(true),
    )
    .addStringOption((o) =>
      o
        .setName('arguments')
        .setDescription('The prompt\'s arguments: name=value, or name="several words"')
        .setRequired(false),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('usage')
    .setDescription('What you spent here today, this week and this month, only to you')
    .toJSON(),
  new SlashCommandBuilder()
    .setName('login')
    .setDescription('A link, only to you, to sign in to a tool server as yourself')
    .addStringOption((o) =>
      o.setName('server').setDescription('The tool server, as mcp.json names it').setRequired(true),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('logins')
    .setDescription('The tool servers you are signed in to as yourself, only to you')
    .toJSON(),
  new SlashCommandBuilder()
    .setName('logout')
    .setDescription("End your sign-in to a tool server (an admin: anyone's)")
    .addStringOption((o) =>
      o.setName('server').setDescription('The tool server, as mcp.json names it').setRequired(true),
    )
    .addUserOption((o) =>
      o.setName('person').setDescription('Whose sign-in (admins only)').setRequired(false),
    )
    .toJSON(),
  new SlashCommandBuilder()
    .setName('new')
    .setDescription('Start a fresh conversation in this channel or thread')
    .toJSON(),
  new SlashCommandBuilder()
    .setName('schedule')
    .setDescription(
      'Run a prompt on its own: "every weekday at 9:00" <prompt>, or list, or cancel <id>',
    )
    .addStringOption((o) =>
      o
        .setName('what')
        .setDescription('"every day at 9:00" Summarize…, or list, or cancel 12')
        .setRequired(false)
        .setMaxLength(4000),
    )
    .toJSON(),
  new SlashCommandBuilder().setName('help').setDescription('What Spool can do').toJSON(),
];

export function inviteUrl(applicationId: string): string {
  return `https://discord.com/oauth2/authorize?client_id=${applicationId}&scope=bot%20applications.commands&permissions=${INVITE_PERMISSIONS}`;
}

type CommandShape = { name: string; description: string; options?: unknown[] };

/** The parts of a command definition we set; Discord adds ids, versions and defaults. */
function comparable(commands: CommandShape[]): string {
  const option = (o: Record<string, unknown>) => ({
    name: o.name,
    description: o.description,
    type: o.type,
    required: o.required ?? false,
    max_length: o.max_length ?? null,
  });
  return JSON.stringify(
    commands
      .map((c) => ({
        name: c.name,
        description: c.description,
        options: (c.options ?? []).map((o) => option(o as Record<string, unknown>)),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  );
}

/** Sends the command definitions only when they differ from what Discord has. */
export async function registerCommands({ client, config, logger }: DiscordParts): Promise<void> {
  const route = config.guildId
    ? Routes.applicationGuildCommands(config.applicationId, config.guildId)
    : Routes.applicationCommands(config.applicationId);
  const existing = (await client.rest.get(route)) as CommandShape[];
  if (comparable(existing) === comparable(DISCORD_COMMANDS)) {
    logger.info('Discord: slash commands are up to date');
    return;
  }
  await client.rest.put(route, { body: DISCORD_COMMANDS });
  logger.info(
    `Discord: registered slash commands ${config.guildId ? `in guild ${config.guildId}` : 'globally (may take up to an hour to appear)'}`,
  );
}
