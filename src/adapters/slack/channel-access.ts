import type { webApi } from '@slack/bolt';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';

/**
 * Who may read a Slack channel: its members (conversations.members, page by page), which for a
 * direct message is its own person. A channel the bot is not in, or cannot see, reads as no one's.
 */
export function slackChannelAccess(
  clientOf: (workspace: string) => Promise<webApi.WebClient>,
): ChannelAccess {
  return {
    async canRead(user, { workspace, channel }) {
      const client = await clientOf(workspace).catch(() => undefined);
      if (!client) return false;
      let cursor: string | undefined;
      do {
        const page = await client.conversations
          .members({ channel, limit: 1000, ...(cursor ? { cursor } : {}) })
          .catch(() => undefined);
        if (!page) return false;
        if (page.members?.includes(user)) return true;
        cursor = page.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return false;
    },
  };
}
