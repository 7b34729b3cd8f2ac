import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../core/logger.ts';
import type { ToolOutcome } from '../../core/ports/tools.ts';
import { errorResult } from '../../core/ports/tools.ts';
import type { McpServerConfig } from './config.ts';
import { toOutcome } from './result.ts';
import { connectTransport } from './transport.ts';

type ConnectionState = 'connecting' | 'ready' | 'down' | 'closed';

/** How much of a server's output Spool takes in: one stdio message, and the bytes of one binary part it keeps. */
export interface McpLimits {
  maxMessageBytes: number;
  binaryMaxBytes: number;
}

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/**
 * One MCP server: connects, keeps its tool list, and reconnects with exponential backoff when
 * the server dies. The last known tool list stays visible during an outage so the model's tools
 * do not vanish mid-conversation; calls then get an error result at once.
 */
export class McpServerConnection {
  state: ConnectionState = 'connecting';
  tools: McpTool[] = [];
  private client?: Client;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly clientInfo: { name: string; version: string },
    private readonly limits: McpLimits,
  ) {}

  /** Resolves after the first attempt, whether or not it succeeded. */
  async start(): Promise<void> {
    await this.connect();
  }

  private closed(): boolean {
    return this.state === 'closed';
  }

  private allowed(tool: McpTool): boolean {
    const { allowedTools, blockedTools } = this.config;
    return (!allowedTools || allowedTools.includes(tool.name)) && !blockedTools?.includes(tool.name);
  }

  private async connect(): Promise<void> {
    if (this.closed()) return;
    const client = new Client(this.clientInfo);
    client.onclose = () => this.lost(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refreshTools(client));
    try {
      await connectTransport(client, this.config, this.limits.maxMessageBytes, (line) => this.logger.debug(`[mcp:${this.config.name}] ${line}`));
      this.client = client;
      await this.refreshTools(client);
      // close() may have run while we were connecting.
      if (this.closed()) return void (await client.close());
      this.state = 'ready';
      this.retryMs = FIRST_RETRY_MS;
      this.logger.info(`MCP server "${this.config.name}" ready with ${this.tools.length} tools`);
    } catch (error) {
      this.client = undefined;
      client.onclose = undefined;
      await client.close().catch(() => {});
      this.scheduleReconnect(`could not start: ${(error as Error).message}`);
    }
  }

  private async refreshTools(client: Client): Promise<void> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    this.tools = tools.filter((t) => this.allowed(t));
  }

  private lost(client: Client): void {
    if (this.client !== client || this.closed()) return;
    this.client = undefined;
    this.scheduleReconnect('stopped');
  }

  private scheduleReconnect(reason: string): void {
    if (this.closed()) return;
    this.state = 'down';
    this.logger.warn(`MCP server "${this.config.name}" ${reason}; retrying in ${this.retryMs / 1000} s`);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const client = this.client;
    if (this.state !== 'ready' || !client) {
      return errorResult(`MCP server "${this.config.name}" is unavailable right now (it stopped and is being restarted). Try again shortly.`);
    }
    try {
      // The SDK cancels the request on the server (notifications/cancelled) when this times out. It
      // never removes the abort listener it adds, so it gets a signal of its own for this call,
      // not the turn's, which would gather one listener per call.
      const options = { signal: AbortSignal.any([signal]), timeout: this.config.timeoutMs };
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, options)) as CallToolResult;
      return toOutcome(result, this.limits.binaryMaxBytes);
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return errorResult(`${tool} on MCP server "${this.config.name}" did not finish within ${this.config.timeoutMs / 1000} s and was cancelled.`);
      }
      return errorResult(`${tool} on MCP server "${this.config.name}" failed: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close();
  }
}
