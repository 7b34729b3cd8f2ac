import { EnvHttpProxyAgent, fetch as undiciFetch, type Dispatcher } from 'undici';

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY for Spool's outbound connections, through undici's
 * EnvHttpProxyAgent: Node's built-in fetch and the SDKs' defaults ignore the variables.
 * Undefined when none is set, so nothing changes for the many who use no proxy.
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): Dispatcher | undefined {
  const set = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((name) =>
    env[name]?.trim(),
  );
  return set ? new EnvHttpProxyAgent() : undefined;
}

/** A fetch for SDKs that take one (openai, Slack's Web API): undici's own, through `dispatcher`. */
export function fetchThrough(dispatcher: Dispatcher): typeof fetch {
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}
