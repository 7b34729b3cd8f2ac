import type {
  ButtonInteraction,
  ChatInputCommandInteraction,
  Client,
  ModalSubmitInteraction,
} from 'discord.js';
import type { Dispatcher } from 'undici';
import type { Policy } from '../../core/delivery/rules/policy.ts';
import type { Logger } from '../../core/logger.ts';
import type { GatewayPort, ShardEvent } from '../../core/ports/platform/gateway.ts';
import type { Delivery } from '../../core/ports/platform/platform.ts';
import type { DiscordSettings, DiscordShardSettings } from './settings.ts';

export interface DiscordAdapterConfig extends Omit<DiscordSettings, 'shards'> {
  /**
   * REST calls go through this (a proxy). The gateway does not: discord.js opens it with the `ws`
   * package and takes no agent for it.
   */
  dispatcher?: Dispatcher;
  /**
   * The gateway's shards shared with the other replicas through the database. Without it this
   * process alone holds the gateway, as one discord.js client.
   */
  sharding?: DiscordSharding;
  /** The per-channel policy (POLICY_FILE): which emoji ask something (`reactions`). */
  policy?: Policy;
}

export interface DiscordSharding extends DiscordShardSettings {
  gateway: GatewayPort;
  /** This process's name on the shards' leases: unique per process. */
  holder: string;
  /** What the shards did: identifies, resumes, gaps (the metrics). */
  onEvent?(event: ShardEvent): void;
}

/**
 * What each part of the adapter works with: the discord.js client (its REST client, its events),
 * the settings, the delivery engine (its commands answered in time or with plain words, see
 * core/delivery/commands/commands.ts), the log.
 */
export interface DiscordParts {
  client: Client;
  config: DiscordAdapterConfig;
  delivery: Delivery;
  logger: Logger;
}

/** What a person does that reaches Spool: a slash command, a button, a modal's submit. */
export type PersonInteraction =
  ChatInputCommandInteraction | ButtonInteraction | ModalSubmitInteraction;
