import type { Logger } from '../../core/logger.ts';
import type { Tool } from '../../core/ports/tools.ts';
import type { ToolSource } from '../registry.ts';
import type { McpConfig } from './config.ts';
import { McpServerConnection, type McpLimits } from './connection.ts';
import { exposedToolNames } from './naming.ts';

const CLIENT_INFO = { name: 'spool', version: '0.1.0' };

/** The tools of every configured MCP server, as one source for the registry. */
export class McpToolSource implements ToolSource {
  private constructor(private readonly connections: McpServerConnection[]) {}

  /** Starts every server at once; one that fails is reported and retried, never fatal. */
  static async start(config: McpConfig, logger: Logger, limits: McpLimits): Promise<McpToolSource> {
    for (const problem of config.problems) logger.error(`${problem} (skipped)`);
    const connections = config.servers.map((server) => new McpServerConnection(server, logger, CLIENT_INFO, limits));
    await Promise.all(connections.map((c) => c.start()));
    return new McpToolSource(connections);
  }

  tools(): Tool[] {
    const entries = this.connections.flatMap((connection) => connection.tools.map((tool) => ({ connection, tool })));
    const names = exposedToolNames(entries.map((e) => ({ server: e.connection.config.name, tool: e.tool.name })));
    return entries.map(({ connection, tool }, i) => ({
      spec: {
        name: names[i]!,
        description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${connection.config.name})`,
        parameters: { ...tool.inputSchema, type: 'object' },
      },
      run: (args, context) => connection.call(tool.name, args, context.signal),
    }));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.connections.map((c) => c.close()));
  }
}
