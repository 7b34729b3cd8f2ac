import type { RequestListener } from 'node:http';
import { Client, Events, type ClientOptions, type Interaction, type RESTOptions } from 'discord.js';
import type { Delivery, PlatformAdapter } from '../../core/ports/platform/platform.ts';
import type { Logger } from '../../core/logger.ts';
import { answeringCommands } from '../../core/delivery/commands/commands.ts';
import { answerCommand } from './interactions/commands.ts';
import { guardGateway } from './gateway.ts';
import {
  discordPublicKey,
  INTERACTIONS_PATH,
  interactionsHandler,
  PendingAnswers,
} from './interactions/http-interactions.ts';
import { answerComponent } from './interactions/interactions.ts';
import { intentsFor, listenForMentions } from './inbound/mentions.ts';
import { DIRECT_MESSAGES } from './inbound/inbound.ts';
import { discordOutbound } from './outbound.ts';
import { listenForReactions } from './inbound/reactions.ts';
import type { DiscordAdapterConfig, DiscordParts } from './parts.ts';
import { discordRequest } from './rest-request.ts';
import { inviteUrl, registerCommands } from './interactions/slash-commands.ts';
import { NO_MENTIONS } from './text.ts';
import type { ShardKeeper } from './shards/shard-keeper.ts';
import { startSharedGateway } from './shards/shared-gateway.ts';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';
import { discordChannelAccess } from './channel-access.ts';

export type { DiscordAdapterConfig } from './parts.ts';
export { DISCORD_COMMANDS, inviteUrl } from './interactions/slash-commands.ts';
export { DISCORD_HELP, DISCORD_MESSAGE_LIMIT, DISCORD_REFUSAL, isWorkingLine } from './text.ts';
export { NOTHING_TO_STOP } from '../../core/delivery/waiting/clicks.ts';
export { unreadableReply } from '../../core/delivery/intake/handled-reply.ts';

/**
 * Spool through Discord slash commands. `/ask` and `/new` become inbound messages of the
 * channel's lane (the lane names the current conversation, which `/new` replaces); the deferral
 * is sent once the message is stored. Replies go over REST with the interaction token kept in
 * the inbox, so any replica can deliver them: edit the deferred response, then follow up. This
 * file wires discord.js; what flows through it is translated in gateway.ts (events as discord.js
 * can read them), inbound.ts (commands that become messages), commands.ts (the slash commands),
 * interactions.ts (buttons and modals) and outbound.ts (replies, status, files).
 */
export class DiscordAdapter implements PlatformAdapter {
  readonly name = 'Discord';
  private readonly parts: DiscordParts;
  private readonly options: ClientOptions;
  /** The shards this replica holds, when they are shared with other replicas. */
  private keeper?: ShardKeeper;
  readonly httpPath = INTERACTIONS_PATH;
  /** Interactions over HTTP (DISCORD_PUBLIC_KEY): Discord's requests, on the bot's HTTP server. */
  private readonly http?: RequestListener;

  constructor(config: DiscordAdapterConfig, delivery: Delivery, logger: Logger) {
    // Interactions need no intent; none of the default ones is privileged (see intentsFor).
    // discord.js bundles undici 6, whose requests take our undici 7 dispatcher (the types differ;
    // tested), files included once discordRequest has encoded them.
    const agent = config.dispatcher as unknown as RESTOptions['agent'] | undefined;
    const rest: Partial<RESTOptions> = {
      makeRequest: discordRequest,
      ...(config.apiUrl ? { api: config.apiUrl } : {}),
      ...(agent ? { agent } : {}),
    };
    this.options = {
      intents: intentsFor({
        messageContent: config.messageContent,
        reactions: (config.policy?.rules ?? []).some((rule) => rule.reactions),
      }),
      rest,
      allowedMentions: NO_MENTIONS,
    };
    const client = new Client(this.options);
    // The delivery engine, its commands answered in time or with plain words (see commands.ts).
    this.parts = { client, config, delivery: answeringCommands(delivery), logger };
    // Shared shards each have a client of their own; this one then only speaks REST.
    if (!config.sharding) this.listen(client);
    if (config.publicKey) this.http = this.httpInteractions(config.publicKey, rest);
    delivery.register('discord', discordOutbound(this.parts), {
      workspaces: config.allowedGuilds,
      roles: config.allowedRoles,
      directMessages: DIRECT_MESSAGES,
    });
  }

  async start(): Promise<void> {
    const { client, config, logger } = this.parts;
    client.rest.setToken(config.token);
    await registerCommands(this.parts);
    if (config.sharding) {
      const shared = await startSharedGateway(config.sharding, {
        app: config.applicationId,
        token: config.token,
        rest: client.rest,
        options: this.options,
        listen: (shardClient) => this.listen(shardClient),
        logger,
      });
      this.keeper = shared.keeper;
      const { shardCount, generation } = shared.gateway;
      return logger.info(
        `Discord: connected as ${shared.botUser.username}, holding shards [${shared.keeper.shards().join(', ')}] of ${shardCount} (generation ${generation}). Invite: ${inviteUrl(config.applicationId)}`,
      );
    }
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    await client.login(config.token);
    await ready;
    logger.info(
      `Discord: connected as ${client.user?.tag}. Invite: ${inviteUrl(config.applicationId)}`,
    );
  }

  async stop(): Promise<void> {
    await this.keeper?.stop();
    await this.parts.client.destroy();
  }

  /** Who may read a channel: a member its permissions let view it (the web pages). */
  channelAccess(): ChannelAccess {
    return discordChannelAccess(this.parts.client);
  }

  /** Whether the gateway is connected (each shard this replica holds): interactions reach Spool now. */
  ready(): boolean {
    return this.keeper ? this.keeper.ready() : this.parts.client.isReady();
  }

  /** Discord's interactions endpoint: its requests, answered as the gateway's interactions. */
  httpHandler(): RequestListener | undefined {
    return this.http;
  }

  /**
   * The handler of interactions over HTTP. They are built on a client of their own, never
   * connected, whose REST gives an interaction's first answer to its HTTP request.
   */
  private httpInteractions(publicKey: string, rest: Partial<RESTOptions>): RequestListener {
    const { config, logger } = this.parts;
    const pending = new PendingAnswers();
    const makeRequest = pending.answerOverHttp(discordRequest);
    const client = new Client({ ...this.options, rest: { ...rest, makeRequest } });
    return interactionsHandler({
      key: discordPublicKey(publicKey),
      applicationId: config.applicationId,
      client,
      pending,
      interacted: (interaction) => this.interacted(interaction),
      logger,
    });
  }

  /** What Spool hears on a gateway client: interactions, mentions, reactions, its errors. */
  private listen(client: Client): void {
    const { config, logger } = this.parts;
    guardGateway(client, config.applicationId, logger);
    client.on(Events.InteractionCreate, (interaction) => void this.interacted(interaction));
    listenForMentions({ ...this.parts, client });
    listenForReactions({ ...this.parts, client });
    client.on(Events.Error, (error) =>
      logger.error('Discord client error', { error: error.message }),
    );
  }

  /** Never throws: whatever fails, the person hears about it and other channels carry on. */
  private async interacted(interaction: Interaction): Promise<void> {
    if (interaction.isButton() || interaction.isModalSubmit())
      return answerComponent(this.parts, interaction);
    if (interaction.isChatInputCommand()) return answerCommand(this.parts, interaction);
  }
}
