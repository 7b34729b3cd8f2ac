import type { Conversation, ConversationKey } from '../core/ports/conversation.ts';
import type { PrismaClient } from './generated/client.ts';

/** The conversation at a place, created the first time: one row per key, whichever store asks. */
export async function conversationAt(prisma: PrismaClient, key: ConversationKey): Promise<Conversation> {
  const { platform, workspace, channel, thread } = key;
  const row = await prisma.conversation.upsert({
    where: { platform_workspace_channel_thread: { platform, workspace, channel, thread } },
    create: { platform, workspace, channel, thread },
    update: {},
    select: { id: true },
  });
  return { id: row.id, platform, workspace, channel, thread };
}
