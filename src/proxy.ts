import { createRequire } from 'node:module';
import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';

/**
 * undici 7, loaded only once a proxy is set. Loading it installs its Agent as the process-wide
 * dispatcher (`Symbol.for('undici.globalDispatcher.1')`, read by Node's own fetch and by every
 * other undici) where none is yet; on Node 20 discord.js's bundled undici 6 then cannot send a
 * multipart body through it, so a Spool without a proxy must leave other libraries' HTTP alone.
 */
const undici = (): typeof Undici => createRequire(import.meta.url)('undici') as typeof Undici;

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY for Spool's outbound connections, through undici's
 * EnvHttpProxyAgent: Node's built-in fetch and the SDKs' defaults ignore the variables.
 * Undefined when none is set, so nothing changes for the many who use no proxy (undici is not
 * even loaded).
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): Dispatcher | undefined {
  const httpProxy = named(env, 'http_proxy', 'HTTP_PROXY');
  const httpsProxy = named(env, 'https_proxy', 'HTTPS_PROXY');
  if (!httpProxy && !httpsProxy) return undefined;
  const noProxy = named(env, 'no_proxy', 'NO_PROXY') ?? '';
  return new (undici().EnvHttpProxyAgent)({
    httpProxy,
    httpsProxy: httpsProxy ?? httpProxy,
    noProxy,
  });
}

/** The first of `names` set in `env` (lower case first, as undici and curl read them). */
const named = (env: NodeJS.ProcessEnv, ...names: string[]) =>
  names.map((name) => env[name]?.trim()).find(Boolean);

/**
 * A fetch for SDKs that take one (openai, Slack's Web API): undici's own, through `dispatcher`;
 * Node's built-in fetch when there is none.
 */
export function fetchThrough(dispatcher: Dispatcher | undefined): typeof fetch {
  if (!dispatcher) return fetch;
  const { fetch: undiciFetch } = undici();
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}
