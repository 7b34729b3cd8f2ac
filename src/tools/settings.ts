import { existsSync } from 'node:fs';
import type { SettingsReader } from '../core/ports/settings.ts';

export interface ToolSettings {
  /** MCP_CONFIG, or ./mcp.json when that exists. */
  mcpConfigPath?: string;
  /** A broken MCP config starts the bot without its tools (loudly) instead of stopping startup. */
  mcpOptional: boolean;
  /** Bytes of each image, audio or blob a tool returns that are kept. */
  binaryMaxBytes: number;
  /**
   * One stdio message from an MCP server: room for a result up to the store's cap, and its kept
   * bytes.
   */
  maxMessageBytes: number;
  oauth: McpOAuthSettings;
}

/** How Spool keeps OAuth tokens and presents itself to authorization servers. */
export interface McpOAuthSettings {
  /** MCP_OAUTH_KEY: 32 bytes sealing every stored token; unset, no token is kept. */
  key?: Buffer;
  /** Where an operator's browser is sent back with the code. */
  redirectUrl: string;
  /** An https address serving Spool's client metadata document (CIMD). */
  clientMetadataUrl?: string;
  /**
   * Where a person's browser is sent back after signing in to a server used with each person's own
   * account: PUBLIC_URL + /mcp/oauth/callback, on Spool's HTTP server (PORT). None without
   * PUBLIC_URL, and such servers are left off.
   */
  signInRedirectUrl?: string;
  /** Where the links sent to people point: PUBLIC_URL + /mcp/sign-in; set with signInRedirectUrl. */
  signInLinkUrl?: string;
}

/** A loopback address `mcp login` listens on itself; any port is allowed for one (RFC 8252). */
export const DEFAULT_OAUTH_REDIRECT_URL = 'http://127.0.0.1:33418/callback';

function oauthSettings(r: SettingsReader): McpOAuthSettings {
  const encoded = r.string('MCP_OAUTH_KEY');
  const key = encoded === undefined ? undefined : Buffer.from(encoded, 'base64');
  // Never echo the value.
  if (key && key.length !== 32)
    r.problem('MCP_OAUTH_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  const clientMetadataUrl = r.url('MCP_OAUTH_CLIENT_METADATA_URL');
  if (
    clientMetadataUrl &&
    (!clientMetadataUrl.startsWith('https://') || new URL(clientMetadataUrl).pathname === '/')
  )
    r.problem('MCP_OAUTH_CLIENT_METADATA_URL must be an https URL with a path');
  const publicUrl = r.url('PUBLIC_URL');
  return {
    key: key?.length === 32 ? key : undefined,
    redirectUrl: r.url('MCP_OAUTH_REDIRECT_URL') ?? DEFAULT_OAUTH_REDIRECT_URL,
    clientMetadataUrl,
    ...(publicUrl
      ? {
          signInRedirectUrl: new URL(SIGN_IN_CALLBACK_PATH.slice(1), withSlash(publicUrl)).href,
          signInLinkUrl: new URL(SIGN_IN_LINK_PATH.slice(1), withSlash(publicUrl)).href,
        }
      : {}),
  };
}

/** Where the authorization server sends a person back, on Spool's own HTTP server (PORT). */
export const SIGN_IN_CALLBACK_PATH = '/mcp/oauth/callback';

/**
 * Where a sign-in link sends a person first, on the same server: it checks who they are (with the
 * chat platform's own sign-in) before the authorization server. Beside the callback, so that one
 * cookie path serves both.
 */
export const SIGN_IN_LINK_PATH = '/mcp/sign-in';

/** A base address whose path is kept when a path is resolved against it. */
const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** `storeMaxChars`: the longest result the store keeps (the agent's section). */
export function toolSettings(r: SettingsReader, storeMaxChars: number): ToolSettings {
  const path = r.string('MCP_CONFIG');
  if (path && !existsSync(path)) r.problem(`MCP_CONFIG names a file that does not exist: ${path}`);
  const binaryMaxBytes = r.int('TOOL_RESULT_BINARY_MAX_BYTES', 5_000_000, 0);
  return {
    mcpConfigPath: path ?? (existsSync('mcp.json') ? 'mcp.json' : undefined),
    mcpOptional: r.flag('MCP_OPTIONAL', false),
    binaryMaxBytes,
    // A char takes up to 3 bytes of UTF-8 (more escaped, so the cap is not exact), kept bytes 4/3
    // as base64.
    maxMessageBytes: 3 * storeMaxChars + 2 * binaryMaxBytes + 1_048_576,
    oauth: oauthSettings(r),
  };
}
