import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { errorMessage } from '../../../core/errors.ts';
import type { SamplingLimits } from '../server-requests/sampling-limits.ts';
import {
  expand,
  isObject,
  McpConfigError,
  stringList,
  stringMap,
  type Env,
} from './config-values.ts';
import { rootsOf, samplingOf } from './config-offers.ts';

export { McpConfigError } from './config-values.ts';

interface ServerCommon {
  name: string;
  /** A call with no word from the server for this long is cancelled. */
  timeoutMs: number;
  /** A call that keeps reporting progress is cancelled after this long all the same. */
  maxTimeoutMs: number;
  allowedTools?: string[];
  blockedTools?: string[];
  /**
   * Tools (the server's names) the operator says may be called again with the same arguments to no
   * further effect: a call cut short is sent again, as for a tool that says so itself.
   */
  idempotentTools?: string[];
  /**
   * Whether the server may ask Spool's model in its calls (MCP sampling), and how much; absent, it
   * is not offered.
   */
  sampling?: SamplingLimits;
  /** The roots the server is told of (`roots/list`); absent, Spool offers none. */
  roots?: Array<{ uri: string; name?: string }>;
}

export interface StdioServerConfig extends ServerCommon {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface HttpServerConfig extends ServerCommon {
  kind: 'http';
  url: URL;
  headers: Record<string, string>;
  /** 'sse' when the config says so; otherwise Streamable HTTP, falling back to SSE. */
  transport: 'streamable-http' | 'sse';
  /** How Spool authorizes itself; absent when a static `Authorization` header does it. */
  oauth?: OAuthConfig;
  /**
   * `person`: each call is made with the signed-in account of the person whose message the turn
   * answers (`"identity": "person"`); `spool` (the default): with Spool's own (an operator's login,
   * client credentials or a header), for everyone.
   */
  identity: 'spool' | 'person';
}

/**
 * OAuth for an HTTP server. With nothing configured Spool still answers a 401: it discovers the
 * authorization server and identifies itself by its client metadata document or by registering,
 * and an operator logs in once (`spool mcp login`).
 */
export interface OAuthConfig {
  /**
   * `authorization_code`: an operator (or each person) logs in. `client_credentials`: Spool is the
   * client itself. `cross_app_access`: each person's sign-in to the enterprise identity provider is
   * exchanged for the server's token (an ID-JAG, then the jwt-bearer grant). `jwt_bearer`:
   * workload identity, the platform's token for Spool traded for the server's (SEP-1933).
   */
  grant: 'authorization_code' | 'client_credentials' | 'cross_app_access' | 'jwt_bearer';
  /** A client registered in advance with the authorization server. */
  clientId?: string;
  clientSecret?: string;
  /** A PEM private key: the client authenticates with a signed JWT (private_key_jwt). */
  privateKey?: string;
  signingAlgorithm?: string;
  scope?: string;
  /**
   * cross_app_access: the issuer of the server's authorization server, the only one Spool's client
   * secret is then sent to (without it, whichever the server names).
   */
  issuer?: string;
  /**
   * The authorization server, where the server does not name one (the identity provider itself,
   * signed in to directly): never an mcp.json key.
   */
  authorizationServer?: string;
  /** jwt_bearer: the file the platform keeps the workload's identity token in. */
  assertionFile?: string;
  /**
   * Sender-constrained tokens (DPoP, RFC 9449, SEP-1932): each request proves it comes from the
   * key the token was issued to, so a token that leaks is of no use alone.
   */
  dpop?: boolean;
}

/**
 * The enterprise identity provider people sign in to once (`identityProvider` in mcp.json), whose
 * ID token is exchanged for the token of each server marked `"grant": "cross_app_access"`.
 */
export interface IdentityProviderConfig {
  /** What people sign in to it as (`/spool login NAME`); `idp` unless mcp.json names it. */
  name: string;
  /** Its issuer: where its metadata is found and what it signs ID tokens as. */
  issuer: string;
  /** Its token endpoint, for the token exchange; found from its metadata when not given. */
  tokenEndpoint?: string;
  /** Spool's client at the identity provider, for people's sign-ins and the token exchange. */
  clientId: string;
  clientSecret?: string;
  /** What a person's sign-in asks for: `openid` at least. */
  scope: string;
}
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfig {
  servers: McpServerConfig[];
  identityProvider?: IdentityProviderConfig;
  /** One line per server that was skipped, and why. */
  problems: string[];
}

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** How long a call that reports progress may run in all, unless `maxTimeoutMs` says otherwise. */
export const DEFAULT_MAX_TOOL_TIMEOUT_MS = 600_000;

const STDIO_KEYS = ['type', 'command', 'args', 'env', 'cwd'];
const HTTP_KEYS = ['type', 'url', 'headers', 'oauth', 'identity'];
const OAUTH_KEYS = [
  'grant',
  'clientId',
  'clientSecret',
  'privateKey',
  'signingAlgorithm',
  'scope',
  'issuer',
  'assertionFile',
  'dpop',
];
const GRANTS: Array<OAuthConfig['grant']> = [
  'authorization_code',
  'client_credentials',
  'cross_app_access',
  'jwt_bearer',
];
const IDP_KEYS = ['name', 'issuer', 'tokenEndpoint', 'clientId', 'clientSecret', 'scope'];
const COMMON_KEYS = [
  'enabled',
  'timeoutMs',
  'maxTimeoutMs',
  'allowedTools',
  'blockedTools',
  'idempotentTools',
  'sampling',
  'roots',
];

function parseServer(
  name: string,
  raw: unknown,
  baseDir: string,
  env: Env,
  secrets: ReadonlySet<string>,
): McpServerConfig | undefined {
  if (!isObject(raw)) throw new McpConfigError('must be an object');
  if (raw.enabled === false) return undefined;
  if (raw.enabled !== undefined && typeof raw.enabled !== 'boolean')
    throw new McpConfigError('"enabled" must be true or false');
  const isHttp =
    raw.url !== undefined ||
    raw.type === 'http' ||
    raw.type === 'sse' ||
    raw.type === 'streamable-http';
  const allowed = [...(isHttp ? HTTP_KEYS : STDIO_KEYS), ...COMMON_KEYS];
  const unknown = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw new McpConfigError(
      `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${allowed.join(', ')})`,
    );
  const timeoutMs = raw.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new McpConfigError('"timeoutMs" must be a positive whole number');
  const maxTimeoutMs = raw.maxTimeoutMs ?? Math.max(timeoutMs, DEFAULT_MAX_TOOL_TIMEOUT_MS);
  if (
    typeof maxTimeoutMs !== 'number' ||
    !Number.isInteger(maxTimeoutMs) ||
    maxTimeoutMs < timeoutMs
  )
    throw new McpConfigError('"maxTimeoutMs" must be a whole number no smaller than "timeoutMs"');
  const common = {
    name,
    timeoutMs,
    maxTimeoutMs,
    allowedTools: stringList(raw.allowedTools, 'allowedTools'),
    blockedTools: stringList(raw.blockedTools, 'blockedTools'),
    idempotentTools: stringList(raw.idempotentTools, 'idempotentTools'),
    ...samplingOf(raw.sampling),
    ...rootsOf(raw.roots, baseDir, env, secrets),
  };
  return isHttp
    ? httpServer(raw, common, env, secrets)
    : stdioServer(raw, common, baseDir, env, secrets);
}

type CommonConfig = Pick<
  McpServerConfig,
  | 'name'
  | 'timeoutMs'
  | 'maxTimeoutMs'
  | 'allowedTools'
  | 'blockedTools'
  | 'idempotentTools'
  | 'sampling'
  | 'roots'
>;

function httpServer(
  raw: Record<string, unknown>,
  common: CommonConfig,
  env: Env,
  secrets: ReadonlySet<string>,
): McpServerConfig {
  if (typeof raw.url !== 'string') throw new McpConfigError('"url" must be a string');
  let url: URL;
  try {
    url = new URL(expand(raw.url, env, secrets));
  } catch (error) {
    throw error instanceof McpConfigError ? error : new McpConfigError(`"url" is not a valid URL`);
  }
  if (!['http:', 'https:'].includes(url.protocol))
    throw new McpConfigError('"url" must be http(s)');
  const headers = stringMap(raw.headers, 'headers', env, secrets);
  const staticAuthorization = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
  if (staticAuthorization && raw.oauth !== undefined)
    throw new McpConfigError('give "oauth" or an Authorization header, not both');
  const identity = raw.identity ?? 'spool';
  if (identity !== 'spool' && identity !== 'person')
    throw new McpConfigError('"identity" must be person or spool');
  const oauth = staticAuthorization ? undefined : oauthConfig(raw.oauth ?? {}, env, secrets);
  if (identity === 'person' && oauth?.grant !== 'authorization_code' && !crossApp(oauth))
    throw new McpConfigError(
      '"identity": "person" needs each person to sign in: no Authorization header, and "oauth.grant" authorization_code or cross_app_access',
    );
  if (crossApp(oauth) && identity !== 'person')
    throw new McpConfigError(
      '"oauth.grant" cross_app_access acts as each person: add "identity": "person"',
    );
  return {
    kind: 'http',
    ...common,
    url,
    headers,
    transport: raw.type === 'sse' ? 'sse' : 'streamable-http',
    ...(oauth ? { oauth } : {}),
    identity,
  };
}

const crossApp = (oauth: OAuthConfig | undefined) => oauth?.grant === 'cross_app_access';

function oauthConfig(raw: unknown, env: Env, secrets: ReadonlySet<string>): OAuthConfig {
  if (!isObject(raw)) throw new McpConfigError('"oauth" must be an object');
  const unknown = Object.keys(raw).filter((k) => !OAUTH_KEYS.includes(k));
  if (unknown.length > 0)
    throw new McpConfigError(
      `unknown "oauth" key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${OAUTH_KEYS.join(', ')})`,
    );
  const fields = stringMap(
    Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'grant' && k !== 'dpop')),
    'oauth',
    env,
    secrets,
  );
  const grant = raw.grant ?? 'authorization_code';
  if (!GRANTS.includes(grant as OAuthConfig['grant']))
    throw new McpConfigError(`"oauth.grant" must be ${GRANTS.join(', ')}`);
  const config: OAuthConfig = {
    grant: grant as OAuthConfig['grant'],
    ...fields,
    ...(dpopOf(raw.dpop) ? { dpop: true } : {}),
  };
  checkWorkloadIdentity(config);
  if (config.grant !== 'authorization_code' && !config.clientId)
    throw new McpConfigError(`"oauth.grant" ${config.grant} needs "clientId"`);
  if (config.grant === 'cross_app_access' && (!config.clientSecret || config.privateKey))
    throw new McpConfigError('"oauth.grant" cross_app_access needs "clientSecret"');
  if (config.issuer !== undefined && config.grant !== 'cross_app_access')
    throw new McpConfigError('"oauth.issuer" is for "oauth.grant" cross_app_access');
  if (config.grant === 'client_credentials' && !config.clientSecret === !config.privateKey)
    throw new McpConfigError(
      '"oauth.grant" client_credentials needs "clientSecret" or "privateKey" (one)',
    );
  if ((config.clientSecret || config.privateKey) && !config.clientId)
    throw new McpConfigError('"oauth.clientSecret" and "oauth.privateKey" need "oauth.clientId"');
  return config;
}

function dpopOf(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw new McpConfigError('"oauth.dpop" must be true or false');
  return value === true;
}

/** jwt_bearer needs the workload's token and nothing of a client secret's; nothing else takes one. */
function checkWorkloadIdentity(config: OAuthConfig): void {
  if (config.grant !== 'jwt_bearer') {
    if (config.assertionFile !== undefined)
      throw new McpConfigError('"oauth.assertionFile" is for "oauth.grant" jwt_bearer');
    return;
  }
  if (!config.assertionFile)
    throw new McpConfigError('"oauth.grant" jwt_bearer needs "assertionFile"');
  if (config.clientSecret || config.privateKey)
    throw new McpConfigError(
      '"oauth.grant" jwt_bearer proves itself with the workload\'s token: no "clientSecret" or "privateKey"',
    );
}

function stdioServer(
  raw: Record<string, unknown>,
  common: CommonConfig,
  baseDir: string,
  env: Env,
  secrets: ReadonlySet<string>,
): McpServerConfig {
  if (raw.type !== undefined && raw.type !== 'stdio')
    throw new McpConfigError(`"type" must be stdio, http or sse`);
  if (typeof raw.command !== 'string' || !raw.command.trim())
    throw new McpConfigError(
      '"command" must be a non-empty string (or give "url" for a remote server)',
    );
  const cwd =
    raw.cwd === undefined
      ? baseDir
      : typeof raw.cwd === 'string'
        ? resolve(baseDir, expand(raw.cwd, env, secrets))
        : undefined;
  if (cwd === undefined) throw new McpConfigError('"cwd" must be a string');
  return {
    kind: 'stdio',
    ...common,
    command: expand(raw.command, env, secrets),
    args: (stringList(raw.args, 'args') ?? []).map((a) => expand(a, env, secrets)),
    env: stringMap(raw.env, 'env', env, secrets),
    cwd,
  };
}

/** Where in `text` a JSON.parse error's "position N" is, as "line L, column C". */
function whereInText(text: string, message: string): string {
  const position = Number(/position (\d+)/.exec(message)?.[1] ?? NaN);
  if (Number.isNaN(position)) return '';
  const before = text.slice(0, position).split('\n');
  return ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/**
 * The format Claude Desktop and Cursor users already have (`mcpServers`), or VS Code's
 * (`servers`). A broken server entry is reported and skipped; a file that is not a config fails
 * as a whole. Relative paths (`cwd`) resolve from the file's folder, which is also the default
 * working directory.
 */
export function parseMcpConfig(
  text: string,
  path: string,
  env: Env,
  secretNames: ReadonlySet<string>,
): McpConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = errorMessage(error);
    throw new McpConfigError(`${path} is not valid JSON${whereInText(text, message)}: ${message}`);
  }
  const servers = isObject(json) ? (json.mcpServers ?? json.servers) : undefined;
  if (!isObject(servers))
    throw new McpConfigError(`${path} must have an "mcpServers" object (or VS Code's "servers")`);
  const baseDir = dirname(resolve(path));
  const config: McpConfig = { servers: [], problems: [] };
  try {
    const idp = identityProvider(
      isObject(json) ? json.identityProvider : undefined,
      env,
      secretNames,
    );
    if (idp) config.identityProvider = idp;
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    config.problems.push(`"identityProvider": ${error.message}`);
  }
  for (const [name, raw] of Object.entries(servers)) {
    try {
      const server = parseServer(name, raw, baseDir, env, secretNames);
      if (server?.kind === 'http' && crossApp(server.oauth) && !config.identityProvider)
        throw new McpConfigError(
          '"oauth.grant" cross_app_access needs an "identityProvider" beside "mcpServers"',
        );
      if (server && server.name === config.identityProvider?.name)
        throw new McpConfigError('has the name of the "identityProvider": rename one of them');
      if (server) config.servers.push(server);
    } catch (error) {
      if (!(error instanceof McpConfigError)) throw error;
      config.problems.push(`MCP server "${name}": ${error.message}`);
    }
  }
  return config;
}

/** The enterprise identity provider, when mcp.json configures one. */
function identityProvider(
  raw: unknown,
  env: Env,
  secrets: ReadonlySet<string>,
): IdentityProviderConfig | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) throw new McpConfigError('must be an object');
  const unknown = Object.keys(raw).filter((k) => !IDP_KEYS.includes(k));
  if (unknown.length > 0)
    throw new McpConfigError(
      `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${IDP_KEYS.join(', ')})`,
    );
  const { name, issuer, tokenEndpoint, clientId, clientSecret, scope } = stringMap(
    raw,
    'identityProvider',
    env,
    secrets,
  );
  if (!issuer || !clientId) throw new McpConfigError('needs "issuer" and "clientId"');
  for (const [key, url] of Object.entries({ issuer, tokenEndpoint }))
    if (url !== undefined && !URL.canParse(url))
      throw new McpConfigError(`"${key}" is not a valid URL`);
  const scopes = (scope ?? 'openid').split(' ').filter(Boolean);
  return {
    name: name || 'idp',
    issuer,
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
    clientId,
    ...(clientSecret ? { clientSecret } : {}),
    scope: [...new Set(['openid', ...scopes])].join(' '),
  };
}

export async function loadMcpConfig(
  path: string,
  env: Env,
  secretNames: ReadonlySet<string>,
): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new McpConfigError(
      `${path} could not be read (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`,
    );
  }
  return parseMcpConfig(text, path, env, secretNames);
}
