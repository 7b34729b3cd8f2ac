import type { SettingsReader } from '../../core/ports/settings.ts';

/** Discord's section; none unless DISCORD_TOKEN and DISCORD_APPLICATION_ID are set. */
export interface DiscordSettings {
  token: string;
  applicationId: string;
  /** Commands are registered to this guild only (instant; for development). */
  guildId?: string;
  apiUrl?: string;
  allowedGuilds?: string[];
  allowedRoles?: string[];
  /**
   * DISCORD_MESSAGE_CONTENT=1: Spool asks for the privileged Message Content intent (switched on in
   * the Developer Portal, Bot → Privileged Gateway Intents) and answers a reply to its message
   * without a mention too. Mentions (of Spool or its role) and DMs are answered without it.
   */
  messageContent?: boolean;
  /**
   * The application's OAuth2 client secret (OAuth2 → Client Secret): Discord's sign-in, which
   * checks who follows a link to sign in to a tool server as themselves.
   */
  clientSecret?: string;
  /**
   * DISCORD_PUBLIC_KEY (General Information → Public Key, 64 hex digits): interactions are also
   * taken over HTTP, at /discord/interactions on PORT, their signature checked with it.
   */
  publicKey?: string;
  /** The gateway's shards, shared by the replicas through the database (docs/discord-at-scale.md). */
  shards: DiscordShardSettings;
}

export interface DiscordShardSettings {
  /** DISCORD_SHARDS: a number, or 'auto' (the default): Discord's own (`GET /gateway/bot`). */
  count: number | 'auto';
  /** DISCORD_SHARD_LEASE_MS: a shard whose holder stops renewing is taken over after this long. */
  leaseMs: number;
  /**
   * DISCORD_IDENTIFY_SPACING_MS: between two identifies of one bucket, across the replicas.
   * Discord's rule is 5 s; lower only against a test double.
   */
  identifySpacingMs: number;
  /**
   * DISCORD_IDENTIFY_MARGIN: identifies of the day's `session_start_limit` no reconnect may take,
   * so a crash-looping replica waits for the reset instead of using the token's last ones.
   */
  identifyMargin: number;
}

function shardSettings(r: SettingsReader): DiscordShardSettings {
  const raw = r.string('DISCORD_SHARDS') ?? 'auto';
  const count = raw === 'auto' ? 'auto' : Number(raw);
  if (count !== 'auto' && !(Number.isInteger(count) && count >= 1))
    r.problem(`DISCORD_SHARDS must be 'auto' or a whole number of at least 1, not "${raw}"`);
  return {
    count: count === 'auto' || Number.isInteger(count) ? count : 'auto',
    leaseMs: r.int('DISCORD_SHARD_LEASE_MS', 20_000, 1_000),
    identifySpacingMs: r.int('DISCORD_IDENTIFY_SPACING_MS', 5_000, 100),
    identifyMargin: r.int('DISCORD_IDENTIFY_MARGIN', 50, 0),
  };
}

export function discordSettings(r: SettingsReader): DiscordSettings | undefined {
  const token = r.string('DISCORD_TOKEN');
  const applicationId = r.string('DISCORD_APPLICATION_ID');
  const guildId = r.string('DISCORD_GUILD_ID');
  const apiUrl = r.url('DISCORD_API_URL');
  const allowedGuilds = r.list('DISCORD_ALLOWED_GUILDS');
  const allowedRoles = r.list('DISCORD_ALLOWED_ROLES');
  const messageContent = r.flag('DISCORD_MESSAGE_CONTENT', false);
  const clientSecret = r.string('DISCORD_CLIENT_SECRET');
  const shards = shardSettings(r);
  const publicKey = r.string('DISCORD_PUBLIC_KEY');
  if (publicKey && !/^[0-9a-f]{64}$/i.test(publicKey))
    r.problem("DISCORD_PUBLIC_KEY must be the application's Public Key: 64 hexadecimal digits");
  // Set together or not at all: one of the pair alone is a mistake worth naming.
  if (token && !applicationId)
    r.problem('DISCORD_APPLICATION_ID must be set when DISCORD_TOKEN is set');
  if (applicationId && !token)
    r.problem('DISCORD_TOKEN must be set when DISCORD_APPLICATION_ID is set');
  return token && applicationId
    ? {
        token,
        applicationId,
        guildId,
        apiUrl,
        allowedGuilds,
        allowedRoles,
        messageContent,
        shards,
        ...(clientSecret ? { clientSecret } : {}),
        ...(publicKey ? { publicKey } : {}),
      }
    : undefined;
}
