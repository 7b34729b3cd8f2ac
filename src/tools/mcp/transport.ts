import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  UnsupportedProtocolVersionError,
  type Client,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import module from 'node:module';
import { errorMessage } from '../../core/errors.ts';
import { traceContextFetch } from '../../tracing/propagation.ts';
import type { HttpServerConfig, McpServerConfig, StdioServerConfig } from './config/config.ts';
import { MessageLineBuffer } from './line-buffer.ts';

/**
 * A stdio server's environment is the SDK's safe base (PATH, HOME, USER, SHELL, TERM, LOGNAME)
 * plus what its config names: never the bot's own environment, which holds its tokens. And where
 * Spool keeps Node's compile cache (src/start.ts), that directory: a server that is a Node program
 * starts from its modules compiled before, as Spool does (the official everything server: 0.28 s
 * of CPU a start without, 0.18 s with). Every server starts twice (see NEGOTIATION), and a server
 * of each person's own once for each person.
 */
function stdioEnvironment(config: StdioServerConfig): Record<string, string> {
  const compileCache = module.getCompileCacheDir?.();
  return {
    ...getDefaultEnvironment(),
    ...(compileCache ? { NODE_COMPILE_CACHE: compileCache } : {}),
    ...config.env,
  };
}

/**
 * What a stdio server runs under: a shell that stops it when Spool is gone. Killed at once
 * (SIGKILL, the OOM killer), Spool cannot stop its servers, and many keep running after their
 * stdin closes. The shell hands the server its stdin (an asynchronous command would get
 * /dev/null), forwards a stop at once (SIGKILL after five seconds), and checks every second that
 * its parent is still Spool: by /proc, since a dead Spool not yet reaped, or its pid reused, would
 * still answer `kill -0`. It waits on its sleep, not in it, so that a stop is not held up by the
 * second: the SDK stops the process that answered its era probe (see NEGOTIATION) before it starts
 * the server for good.
 */
const WATCHDOG = `exec 3<&0
"$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'stop=1' TERM INT HUP
while [ -z "$stop" ] && kill -0 "$child" 2>/dev/null; do
  if [ -r /proc/$$/stat ]; then read -r _ _ _ parent _ < /proc/$$/stat; else kill -0 "$PPID" 2>/dev/null && parent=$PPID; fi
  [ "$parent" = "$PPID" ] || break
  sleep 1 & wait $!
done
kill -TERM "$child" 2>/dev/null
for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$child" 2>/dev/null
wait "$child"`;

function stdioTransport(
  config: StdioServerConfig,
  maxMessageBytes: number,
  onStderr: (line: string) => void,
): StdioClientTransport {
  const args = ['-c', WATCHDOG, 'spool-mcp-server', config.command, ...(config.args ?? [])];
  const transport = new StdioClientTransport({
    command: '/bin/sh',
    args,
    env: stdioEnvironment(config),
    cwd: config.cwd,
    stderr: 'pipe',
  });
  // The SDK takes no buffer of ours; a version that renamed the field must fail here, not lose
  // results.
  const internals = transport as unknown as { _readBuffer?: unknown };
  if (!internals._readBuffer)
    throw new Error(
      'this MCP SDK version has no stdio _readBuffer to replace; see src/tools/mcp/line-buffer.ts',
    );
  internals._readBuffer = new MessageLineBuffer(maxMessageBytes);
  let buffered = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (buffered + chunk.toString()).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) onStderr(line);
  });
  return transport;
}

/**
 * Which era Spool speaks with a server is the SDK's to find out: it asks (`server/discover`, from
 * 2026-07-28 on, or the version the server names in a -32022 error) and speaks that era, or the
 * 2025 one (`initialize`) with a server that does not answer. A stdio server is asked in a process
 * of its own, started for the question and stopped, before the server is started for good.
 */
const NEGOTIATION = { mode: 'auto' } as const;

/**
 * Connects over Streamable HTTP, else the deprecated HTTP+SSE transport older servers speak. A
 * server that wants authorization says so over either, and one that named the protocol versions it
 * speaks (none of Spool's) was reached: neither is a reason to try the other. When both fail, both
 * reasons are given: SSE's alone (a 404 or 405) hides what went wrong.
 */
export async function connectHttp(
  client: Client,
  config: HttpServerConfig,
  authProvider?: OAuthClientProvider,
): Promise<void> {
  client.setVersionNegotiation(NEGOTIATION);
  // With tracing on, each request carries the trace it belongs to (a `traceparent` header).
  const options = {
    requestInit: { headers: config.headers },
    authProvider,
    fetch: traceContextFetch,
  };
  if (config.transport === 'sse')
    return client.connect(new SSEClientTransport(config.url, options));
  try {
    return await client.connect(new StreamableHTTPClientTransport(config.url, options));
  } catch (error) {
    if (error instanceof UnauthorizedError || error instanceof UnsupportedProtocolVersionError)
      throw error;
    await client.connect(new SSEClientTransport(config.url, options)).catch((sse: unknown) => {
      if (sse instanceof UnauthorizedError) throw sse;
      throw new Error(`Streamable HTTP: ${errorMessage(error)}; SSE: ${errorMessage(sse)}`, {
        cause: error,
      });
    });
  }
}

/** Connects `client` over the transport the config describes. */
export async function connectTransport(
  client: Client,
  config: McpServerConfig,
  maxMessageBytes: number,
  onStderr: (line: string) => void,
  authProvider?: OAuthClientProvider,
): Promise<void> {
  if (config.kind === 'stdio') {
    client.setVersionNegotiation(NEGOTIATION);
    await client.connect(stdioTransport(config, maxMessageBytes, onStderr));
  } else await connectHttp(client, config, authProvider);
}
