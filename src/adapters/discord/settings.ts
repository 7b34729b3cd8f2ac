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
   * the Developer Portal, Bot → Privileged Gateway Intents) and answers a message that mentions it
   * or replies to it, like `/ask`. Off: slash commands only.
   */
  messageContent?: boolean;
  /**
   * The application's OAuth2 client secret (OAuth2 → Client Secret): Discord's sign-in, which
   * checks who follows a link to sign in to a tool server as themselves.
   */
  clientSecret?: string;
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
        ...(clientSecret ? { clientSecret } : {}),
      }
    : undefined;
}
