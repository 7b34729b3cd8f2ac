/**
 * Spool as a bot of the context benchmarks: the real agent, store (a scratch PostgreSQL database),
 * history search and tools, every setting read as a user's environment gives it, against a model
 * server the benchmark scripts; and the official filesystem MCP server over a directory, as both
 * Spool and the baselines use it.
 */
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { Agent } from '../../src/core/agent/agent.ts';
import { getContinuationTool } from '../../src/core/builtins/get-continuation.ts';
import { findToolsTool } from '../../src/core/builtins/find-tools.ts';
import { loadToolsTool } from '../../src/core/builtins/load-tools.ts';
import { searchHistoryTool } from '../../src/core/builtins/search-history.ts';
import { OpenAiChatClient } from '../../src/llm/openai-client.ts';
import { openDatabase } from '../../src/store/database.ts';
import { HistorySearch } from '../../src/store/transcripts/history-search.ts';
import { ResultIndexer } from '../../src/store/transcripts/result-index.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { parseMcpConfig } from '../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../src/tools/mcp/source.ts';
import { builtinSource, ToolRegistry, type ToolSource } from '../../src/tools/registry.ts';
import { createScratchDatabase } from '../../test/support/global-db.ts';
import { silentLogger } from '../../test/support/logger.ts';
import { FILESYSTEM_SERVER } from '../../test/support/process.ts';

export interface SpoolBot {
  /** The reply, or undefined when the turn failed. */
  turn(text: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/**
 * One conversation of Spool's over `sources` and its own built-in tools, with the settings `env`
 * gives (OPENAI_BASE_URL at least; DATABASE_URL is a scratch database of its own).
 */
export async function startSpoolBot(
  env: Record<string, string>,
  sources: ToolSource[],
): Promise<SpoolBot> {
  const scratch = await createScratchDatabase('spool_bench_bot');
  const config = loadConfig({ ...env, DATABASE_URL: scratch.url });
  const db = await openDatabase({ ...config.store, logger: silentLogger });
  const store = new TranscriptStore(db);
  const search = new HistorySearch(db.prisma, new ResultIndexer(db, silentLogger));
  const tools: ToolRegistry = new ToolRegistry([
    builtinSource([
      searchHistoryTool(search),
      getContinuationTool(store, config.agent.pages),
      loadToolsTool(() => tools.list()),
      findToolsTool(() => tools.list()),
    ]),
    ...sources,
  ]);
  const agent = new Agent(
    {
      llm: new OpenAiChatClient(config.openai),
      tools,
      store,
      logger: silentLogger,
    },
    config.agent.loop,
  );
  const conversation = await store.openConversation({
    platform: 'bench',
    workspace: 'bench',
    channel: `c${process.pid}`,
    thread: 'bench',
  });
  return {
    async turn(text) {
      const { reply, status } = await agent.runTurn(conversation, text);
      return status === 'failed' ? undefined : reply;
    },
    async close() {
      await db.close();
      await scratch.drop();
    },
  };
}

/** The official filesystem MCP server over `root`, offering only `allowedTools` when given. */
export function filesystemSource(root: string, allowedTools?: string[]): Promise<McpToolSource> {
  return McpToolSource.start(
    parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          fs: {
            command: process.execPath,
            args: [FILESYSTEM_SERVER, root],
            ...(allowedTools ? { allowedTools } : {}),
          },
        },
      }),
      join(root, 'mcp.json'),
      process.env,
      new Set(),
    ),
    silentLogger,
    { maxMessageBytes: 10_485_760, binaryMaxBytes: 0 },
  );
}
