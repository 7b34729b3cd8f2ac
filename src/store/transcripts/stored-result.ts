import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { PrismaClient } from '../generated/client.ts';
import { channelKeyOf } from './conversations.ts';

/**
 * A stored result by its tool call id, within one channel: the newest of that id, or, where a
 * conversation is named, its own first (ids are handed out across the channel's threads).
 */
export async function storedResultIn(
  prisma: PrismaClient,
  scope: ChannelScope,
  toolCallId: string,
  conversationId?: string,
): Promise<{ toolName: string; content: string } | undefined> {
  const [row] = await prisma.$queryRaw<Array<{ tool_name: string; content: string }>>`
    SELECT c.tool_name, r.content FROM tool_results r JOIN tool_calls c ON c.id = r.call_id
     WHERE c.channel_key = ${channelKeyOf(scope)} AND c.tool_call_id = ${toolCallId}
     ORDER BY (c.conversation_id = ${conversationId ?? null}::uuid) DESC NULLS LAST, r.id DESC LIMIT 1`;
  return row && { toolName: row.tool_name, content: row.content };
}
