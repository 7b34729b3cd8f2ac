import type { ConversationKey } from '../../core/ports/conversation.ts';
import type { StoredTask, TaskPort } from '../../core/ports/parked/tasks.ts';
import type { PrismaClient } from '../generated/client.ts';

const conversationKeyOf = (key: ConversationKey): string =>
  JSON.stringify([key.platform, key.workspace, key.channel, key.thread]);

interface TaskRow {
  toolCallId: string;
  server: string;
  taskId: string;
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
}

const toTask = (row: TaskRow): StoredTask => ({
  toolCallId: row.toolCallId,
  server: row.server,
  taskId: row.taskId,
  conversation: {
    platform: row.platform,
    workspace: row.workspace,
    channel: row.channel,
    thread: row.thread,
  },
});

/** The tasks tool calls became, on the tool_tasks table. */
export class TaskLedger implements TaskPort {
  constructor(private readonly prisma: PrismaClient) {}

  async save({ toolCallId, server, taskId, conversation }: StoredTask): Promise<void> {
    const { platform, workspace, channel, thread } = conversation;
    await this.prisma.toolTask.upsert({
      where: { toolCallId },
      create: {
        toolCallId,
        server,
        taskId,
        conversationKey: conversationKeyOf(conversation),
        platform,
        workspace,
        channel,
        thread,
      },
      update: {},
    });
  }

  async open(toolCallId: string): Promise<StoredTask | undefined> {
    const row = await this.prisma.toolTask.findFirst({ where: { toolCallId, finishedAt: null } });
    return row ? toTask(row) : undefined;
  }

  async openAmong(toolCallIds: string[]): Promise<Set<string>> {
    if (toolCallIds.length === 0) return new Set();
    const rows = await this.prisma.toolTask.findMany({
      where: { toolCallId: { in: toolCallIds }, finishedAt: null },
      select: { toolCallId: true },
    });
    return new Set(rows.map((r) => r.toolCallId));
  }

  async openIn(conversation: ConversationKey): Promise<StoredTask[]> {
    const rows = await this.prisma.toolTask.findMany({
      where: { conversationKey: conversationKeyOf(conversation), finishedAt: null },
    });
    return rows.map(toTask);
  }

  async finish(toolCallId: string, status: string): Promise<void> {
    await this.prisma.toolTask.updateMany({
      where: { toolCallId, finishedAt: null },
      data: { status, finishedAt: new Date() },
    });
  }
}
