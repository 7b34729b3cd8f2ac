import type { ChannelScope, Conversation, ConversationKey } from '../../core/ports/conversation.ts';
import type { PrismaClient } from '../generated/client.ts';

/** Scope of search and continuation lookup: one channel of one workspace of one platform. */
export const channelKeyOf = (key: ChannelScope): string =>
  JSON.stringify([key.platform, key.workspace, key.channel]);

/**
 * The conversation at a place, created the first time: one row per key, whichever store asks.
 * One statement: the conflict's no-op update makes the row that exists come back too.
 */
export async function conversationAt(
  prisma: PrismaClient,
  key: ConversationKey,
): Promise<Conversation> {
  const { platform, workspace, channel, thread } = key;
  const [row] = await prisma.$queryRaw<Array<{ id: string }>>`
    INSERT INTO conversations (id, platform, workspace, channel, thread) VALUES (gen_random_uuid(), ${platform}, ${workspace}, ${channel}, ${thread})
    ON CONFLICT (platform, workspace, channel, thread) DO UPDATE SET thread = EXCLUDED.thread
    RETURNING id::text`;
  return { id: row!.id, platform, workspace, channel, thread };
}
