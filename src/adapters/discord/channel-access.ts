import {
  PermissionFlagsBits,
  Routes,
  type Client,
  type RESTGetAPICurrentUserGuildsResult,
} from 'discord.js';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';
import { DIRECT_MESSAGES } from './inbound/inbound.ts';

/** Discord's most servers in one page of the bot's (GET /users/@me/guilds). */
const SERVERS_A_PAGE = 200;

/** Every server of the bot's, page by page (`after` the last of the page before). */
async function botServers(client: Client): Promise<RESTGetAPICurrentUserGuildsResult> {
  const servers: RESTGetAPICurrentUserGuildsResult = [];
  for (;;) {
    const after = servers.at(-1)?.id;
    const query = new URLSearchParams({ limit: String(SERVERS_A_PAGE), ...(after && { after }) });
    const page = (await client.rest.get(Routes.userGuilds(), {
      query,
    })) as RESTGetAPICurrentUserGuildsResult;
    servers.push(...page);
    if (page.length < SERVERS_A_PAGE) return servers;
  }
}

/**
 * Who may read a Discord channel: in a server, a member whose roles and overwrites let them view it
 * (a thread: its parent); a direct message, its own person. Anything the bot cannot fetch reads as
 * no one's. A person's servers are those of the bot's (over REST: every shard's) that have them as
 * a member, each with its name as the bot's list of them gives it.
 */
export function discordChannelAccess(client: Client): ChannelAccess {
  return {
    directMessages: DIRECT_MESSAGES,
    async canRead(user, { workspace, channel }) {
      const found = await client.channels.fetch(channel).catch(() => null);
      if (!found) return false;
      // Its recipients, Spool aside (`recipientId` reads Spool's own id: a client logged in).
      if (found.isDMBased()) return 'recipientIds' in found && found.recipientIds.includes(user);
      if (found.guildId !== workspace) return false;
      const member = await found.guild.members.fetch(user).catch(() => null);
      return !!member && !!found.permissionsFor(member)?.has(PermissionFlagsBits.ViewChannel);
    },
    async workspacesOf(user) {
      const servers = await botServers(client).catch(() => []);
      const member = await Promise.all(
        servers.map(({ id }) =>
          client.rest.get(Routes.guildMember(id, user)).then(
            () => true,
            () => false,
          ),
        ),
      );
      return servers.filter((_, i) => member[i]).map(({ id, name }) => ({ id, name }));
    },
  };
}
