import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../../src/core/ports/tools.ts';
import type { Database } from '../../src/store/database.ts';
import { TaskLedger } from '../../src/store/delivery/task-ledger.ts';
import { parseMcpConfig } from '../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../src/tools/mcp/source.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { silentLogger } from './logger.ts';

/**
 * Spool's MCP tools of `mcpServers` (as in an mcpServers config), with their tasks kept in `db`'s
 * task ledger, or kept nowhere without one; close `source` after the test.
 */
export async function mcpToolsKeepingTasks(
  mcpServers: Record<string, unknown>,
  db: Database | undefined,
): Promise<{ source: McpToolSource; tools: ToolRegistry }> {
  const config = parseMcpConfig(
    JSON.stringify({ mcpServers }),
    join(tmpdir(), 'mcp.json'),
    process.env,
    new Set(),
  );
  const source = await McpToolSource.start(
    config,
    silentLogger,
    { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 },
    undefined,
    db ? new TaskLedger(db.prisma) : undefined,
  );
  return { source, tools: new ToolRegistry([source]) };
}

/** A call's context in a conversation of its own (its thread the call's id); `askForm` asks the person. */
export const taskCallContext = (callId: string, askForm?: ToolContext['askForm']): ToolContext => ({
  conversation: {
    id: '00000000-0000-0000-0000-000000000000',
    platform: 't',
    workspace: 'w',
    channel: 'c',
    thread: callId,
  },
  turn: 1,
  callId,
  signal: new AbortController().signal,
  reading: { transcript: [], viewChars: 200_000 },
  ...(askForm ? { askForm } : {}),
});

/** The task row kept for the call `callId`, if any. */
export const taskRow = (db: Database, callId: string) =>
  db.prisma.toolTask.findUnique({ where: { toolCallId: callId } });
