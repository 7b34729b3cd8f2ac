import { PermissionFlagsBits, type Client } from 'discord.js';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';

/**
 * Who may read a Discord channel: in a server, a member whose roles and overwrites let them view it
 * (a thread: its parent); a direct message, its own person. Anything the bot cannot fetch reads as
 * no one's.
 */
export function discordChannelAccess(client: Client): ChannelAccess {
  return {
    async canRead(user, { workspace, channel }) {
      const found = await client.channels.fetch(channel).catch(() => null);
      if (!found) return false;
      if (found.isDMBased()) return 'recipientId' in found && found.recipientId === user;
      if (found.guildId !== workspace) return false;
      const member = await found.guild.members.fetch(user).catch(() => null);
      return !!member && !!found.permissionsFor(member)?.has(PermissionFlagsBits.ViewChannel);
    },
  };
}
