import {
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Routes,
  SlashCommandBuilder,
  type ChatInputCommandInteraction,
  type Interaction,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { Agent } from '../../core/agent.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelScope } from '../../core/types.ts';
import { formatHits } from '../../tools/search-history.ts';
import { KeyedQueue } from '../shared/keyed-queue.ts';
import type { AdapterStore } from '../shared/ports.ts';
import { splitMessage } from '../shared/split-message.ts';

export const DISCORD_MESSAGE_LIMIT = 2_000;
/** Discord's codes for an interaction token that expired (15 minutes) or is unknown. */
const EXPIRED_TOKEN_CODES = new Set([50027, 10015]);
/** Send Messages + Send Messages in Threads: only for replies that outlive an interaction. */
const INVITE_PERMISSIONS = (1n << 11n) | (1n << 38n);
/** Nobody is ever pinged by a reply: not @everyone, not @here, not a role, not a user. */
const NO_MENTIONS = { parse: [] as never[] };

export interface DiscordAdapterConfig {
  token: string;
  applicationId: string;
  guildId?: string;
  apiUrl?: string;
  allowedGuilds?: string[];
  allowedRoles?: string[];
}

export const DISCORD_COMMANDS: RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  new SlashCommandBuilder()
    .setName('ask')
    .setDescription('Ask Spool; later /ask calls here continue the conversation')
    .addStringOption((o) => o.setName('prompt').setDescription('What you want to ask').setRequired(true).setMaxLength(4000))
    .toJSON(),
  new SlashCommandBuilder()
    .setName('recall')
    .setDescription('Find earlier tool runs and messages in this channel')
    .addStringOption((o) => o.setName('query').setDescription('Words to look for').setRequired(true))
    .toJSON(),
  new SlashCommandBuilder().setName('new').setDescription('Start a fresh conversation in this channel or thread').toJSON(),
  new SlashCommandBuilder().setName('help').setDescription('What Spool can do').toJSON(),
];

export const DISCORD_FAILURE = 'Sorry, something went wrong on my side. Please try again.';

export const DISCORD_HELP = [
  '**Spool** answers with the help of its tools.',
  '• `/ask prompt:<text>`: ask; later `/ask` calls in this channel or thread continue the conversation.',
  '• `/recall query:<text>`: earlier tool runs and messages in this channel that match (only you see them).',
  '• `/new`: start a fresh conversation here; the old one stays searchable.',
].join('\n');

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
      .map((c) => ({ name: c.name, description: c.description, options: (c.options ?? []).map((o) => option(o as Record<string, unknown>)) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  );
}

/**
 * Spool through Discord slash commands. One conversation per channel or thread (the newest,
 * since /new starts another); replies edit the deferred response and continue as follow-ups.
 */
export class DiscordAdapter {
  private readonly client: Client;
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly config: DiscordAdapterConfig,
    private readonly agent: Agent,
    private readonly store: AdapterStore,
    private readonly logger: Logger,
  ) {
    // Interactions need no intent; Guilds (not privileged) keeps channel and role data coherent.
    this.client = new Client({ intents: [GatewayIntentBits.Guilds], rest: config.apiUrl ? { api: config.apiUrl } : {}, allowedMentions: NO_MENTIONS });
    this.client.on(Events.InteractionCreate, (interaction) => void this.handleSafely(interaction));
    this.client.on(Events.Error, (error) => this.logger.error('Discord client error', { error: error.message }));
  }

  async start(): Promise<void> {
    this.client.rest.setToken(this.config.token);
    await this.registerCommands();
    const ready = new Promise<void>((resolve) => this.client.once(Events.ClientReady, () => resolve()));
    await this.client.login(this.config.token);
    await ready;
    this.logger.info(`Discord: connected as ${this.client.user?.tag}. Invite: ${inviteUrl(this.config.applicationId)}`);
  }

  async stop(): Promise<void> {
    await this.client.destroy();
  }

  /** Sends the command definitions only when they differ from what Discord has. */
  private async registerCommands(): Promise<void> {
    const route = this.config.guildId
      ? Routes.applicationGuildCommands(this.config.applicationId, this.config.guildId)
      : Routes.applicationCommands(this.config.applicationId);
    const existing = (await this.client.rest.get(route)) as CommandShape[];
    if (comparable(existing) === comparable(DISCORD_COMMANDS)) {
      this.logger.info('Discord: slash commands are up to date');
      return;
    }
    await this.client.rest.put(route, { body: DISCORD_COMMANDS });
    this.logger.info(`Discord: registered slash commands ${this.config.guildId ? `in guild ${this.config.guildId}` : 'globally (may take up to an hour to appear)'}`);
  }

  private allowed(interaction: ChatInputCommandInteraction): boolean {
    const { allowedGuilds, allowedRoles } = this.config;
    if (allowedGuilds && (!interaction.guildId || !allowedGuilds.includes(interaction.guildId))) return false;
    if (!allowedRoles) return true;
    const roles = interaction.member?.roles;
    const ids = Array.isArray(roles) ? roles : roles ? [...roles.cache.keys()] : [];
    return ids.some((id) => allowedRoles.includes(id));
  }

  private scope(interaction: ChatInputCommandInteraction): ChannelScope {
    return { platform: 'discord', workspace: interaction.guildId ?? 'dm', channel: interaction.channelId };
  }

  /** Never throws: whatever fails, the user hears about it and other channels carry on. */
  private async handleSafely(interaction: Interaction): Promise<void> {
    try {
      await this.handle(interaction);
    } catch (error) {
      // The agent reports its own failures as replies; this is Discord or the database failing.
      this.logger.error('Discord: interaction failed', { error: (error as Error).message });
      if (!interaction.isChatInputCommand()) return;
      const content = DISCORD_FAILURE;
      const answer = interaction.deferred || interaction.replied ? interaction.editReply({ content }) : interaction.reply({ content, flags: MessageFlags.Ephemeral });
      await answer.catch(() => {});
    }
  }

  private async handle(interaction: Interaction): Promise<void> {
    if (!interaction.isChatInputCommand()) return;
    // Exactly once, even when the gateway redelivers or a second replica sees it.
    if (!(await this.store.claimEvent('discord', interaction.id))) return;
    if (!this.allowed(interaction)) {
      await interaction.reply({ content: "Sorry, you can't use Spool here.", flags: MessageFlags.Ephemeral });
      return;
    }
    switch (interaction.commandName) {
      case 'ask':
        return this.ask(interaction);
      case 'recall':
        return this.recall(interaction);
      case 'new':
        return this.startNew(interaction);
      default:
        await interaction.reply({ content: DISCORD_HELP, flags: MessageFlags.Ephemeral });
    }
  }

  private async ask(interaction: ChatInputCommandInteraction): Promise<void> {
    // Discord wants an answer within 3 seconds; the model may take minutes.
    await interaction.deferReply();
    const scope = this.scope(interaction);
    const prompt = interaction.options.getString('prompt', true);
    await this.queue.run(JSON.stringify(scope), async () => {
      const conversation = (await this.store.latestConversation(scope)) ?? (await this.store.openConversation({ ...scope, thread: 'main' }));
      const { reply } = await this.agent.runTurn(conversation, prompt);
      const chunks = splitMessage(reply, DISCORD_MESSAGE_LIMIT);
      try {
        await this.respond(interaction, chunks);
      } catch (error) {
        if (!(error instanceof DiscordAPIError && typeof error.code === 'number' && EXPIRED_TOKEN_CODES.has(error.code))) throw error;
        await this.postToChannel(interaction, chunks);
      }
    });
  }

  /** Edits the deferred response, then follows up in order. */
  private async respond(interaction: ChatInputCommandInteraction, chunks: string[]): Promise<void> {
    await interaction.editReply({ content: chunks[0]!, allowedMentions: NO_MENTIONS });
    for (const content of chunks.slice(1)) await interaction.followUp({ content, allowedMentions: NO_MENTIONS });
  }

  /** An /ask answer that outlived its interaction token (15 minutes) goes to the channel instead. */
  private async postToChannel(interaction: ChatInputCommandInteraction, chunks: string[]): Promise<void> {
    this.logger.warn('Discord: interaction expired before the reply was ready; posting it to the channel', { interaction: interaction.id });
    const intro = `<@${interaction.user.id}>, your \`/ask\` took longer than Discord waits for a reply, so here it is:`;
    for (const content of [intro, ...chunks]) {
      await this.client.rest.post(Routes.channelMessages(interaction.channelId), { body: { content, allowed_mentions: { parse: [], users: [interaction.user.id] } } });
    }
  }

  private async recall(interaction: ChatInputCommandInteraction): Promise<void> {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const query = interaction.options.getString('query', true);
    const hits = await this.store.searchHistory(this.scope(interaction), { text: query, maxResults: 10 });
    // Private results: never the public channel fallback, even if the token expired.
    await this.respond(interaction, splitMessage(formatHits(query, hits), DISCORD_MESSAGE_LIMIT));
  }

  private async startNew(interaction: ChatInputCommandInteraction): Promise<void> {
    // Deferred too: it waits behind any /ask still running here, so that /ask keeps its conversation.
    await interaction.deferReply();
    const scope = this.scope(interaction);
    await this.queue.run(JSON.stringify(scope), () => this.store.openConversation({ ...scope, thread: `new-${interaction.id}` }));
    await this.respond(interaction, ['Started a new conversation here. Earlier ones stay searchable with `/recall`.']);
  }
}
