import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HttpServerConfig, McpServerConfig, StdioServerConfig } from './config.ts';
import { MessageLineBuffer } from './line-buffer.ts';

/**
 * A stdio server's environment is the SDK's safe base (PATH, HOME, USER, SHELL, TERM, LOGNAME)
 * plus what its config names: never the bot's own environment, which holds its tokens.
 */
function stdioEnvironment(config: StdioServerConfig): Record<string, string> {
  return { ...getDefaultEnvironment(), ...config.env };
}

function stdioTransport(config: StdioServerConfig, maxMessageBytes: number, onStderr: (line: string) => void): StdioClientTransport {
  const transport = new StdioClientTransport({ command: config.command, args: config.args, env: stdioEnvironment(config), cwd: config.cwd, stderr: 'pipe' });
  // The SDK takes no buffer of ours; a version that renamed the field must fail here, not lose results.
  const internals = transport as unknown as { _readBuffer?: unknown };
  if (!internals._readBuffer) throw new Error('this MCP SDK version has no stdio _readBuffer to replace; see src/tools/mcp/line-buffer.ts');
  internals._readBuffer = new MessageLineBuffer(maxMessageBytes);
  let buffered = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (buffered + chunk.toString()).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) onStderr(line);
  });
  return transport;
}

async function connectHttp(client: Client, config: HttpServerConfig): Promise<void> {
  const requestInit = { headers: config.headers };
  if (config.transport === 'streamable-http') {
    try {
      await client.connect(new StreamableHTTPClientTransport(config.url, { requestInit }));
      return;
    } catch {
      // Older servers speak only the deprecated HTTP+SSE transport: try that before giving up.
    }
  }
  await client.connect(new SSEClientTransport(config.url, { requestInit }));
}

/** Connects `client` over the transport the config describes. */
export async function connectTransport(client: Client, config: McpServerConfig, maxMessageBytes: number, onStderr: (line: string) => void): Promise<void> {
  if (config.kind === 'stdio') await client.connect(stdioTransport(config, maxMessageBytes, onStderr));
  else await connectHttp(client, config);
}
