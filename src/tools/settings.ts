import { existsSync } from 'node:fs';
import type { SettingsReader } from '../core/ports/settings.ts';

export interface ToolSettings {
  /** MCP_CONFIG, or ./mcp.json when that exists. */
  mcpConfigPath?: string;
  /** A broken MCP config starts the bot without its tools (loudly) instead of stopping startup. */
  mcpOptional: boolean;
  /** Bytes of each image, audio or blob a tool returns that are kept. */
  binaryMaxBytes: number;
  /** One stdio message from an MCP server: room for a result up to the store's cap, and its kept bytes. */
  maxMessageBytes: number;
}

/** `storeMaxChars`: the longest result the store keeps (the agent's section). */
export function toolSettings(r: SettingsReader, storeMaxChars: number): ToolSettings {
  const path = r.string('MCP_CONFIG');
  if (path && !existsSync(path)) r.problem(`MCP_CONFIG names a file that does not exist: ${path}`);
  const binaryMaxBytes = r.int('TOOL_RESULT_BINARY_MAX_BYTES', 5_000_000, 0);
  return {
    mcpConfigPath: path ?? (existsSync('mcp.json') ? 'mcp.json' : undefined),
    mcpOptional: r.flag('MCP_OPTIONAL', false),
    binaryMaxBytes,
    // A char takes up to 3 bytes of UTF-8 (more escaped, so the cap is not exact), kept bytes 4/3 as base64.
    maxMessageBytes: 3 * storeMaxChars + 2 * binaryMaxBytes + 1_048_576,
  };
}
