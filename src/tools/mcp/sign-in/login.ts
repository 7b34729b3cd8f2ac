import { Client, UnauthorizedError } from '@modelcontextprotocol/client';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import type { HttpServerConfig, OAuthConfig } from '../config/config.ts';
import {
  callbackFromPaste,
  StoredOAuthProvider,
  type OAuthIdentity,
  type OAuthVault,
} from './oauth.ts';
import { connectHttp } from '../transport.ts';

/**
 * Whoever completes an authorization: opens `url`, approves, and brings back the address the
 * browser was sent to (or just its code).
 */
export type Operator = (url: string) => Promise<string>;

/**
 * Logs Spool in to `server` once, for every later start and replica: the authorization the server
 * last asked for (a step-up's wider scope), or the one a first connection starts. 'already' when
 * the server takes Spool as it is.
 */
export async function login(
  server: HttpServerConfig & { oauth: OAuthConfig },
  vault: OAuthVault,
  identity: OAuthIdentity,
  operator: Operator,
  clientInfo: { name: string; version: string },
): Promise<'logged_in' | 'already'> {
  const provider = await StoredOAuthProvider.open(server, vault, identity);
  if (!provider.pendingAuthorization) {
    const probe = new Client(clientInfo);
    try {
      await connectHttp(probe, server, provider);
      return 'already';
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    } finally {
      // Nothing to report from closing a probe.
      await probe.close().catch(() => {});
    }
  }
  const url = provider.pendingAuthorization;
  if (!url) throw new Error(`MCP server "${server.name}" did not say where to log in`);
  const callback = callbackFromPaste(await operator(url));
  if (!callback) throw new Error('no authorization code was given');
  await provider.finishLogin(callback);
  return 'logged_in';
}

/**
 * An operator at a terminal: prints the URL, then takes whichever comes first, the browser landing
 * on the redirect address (when it is this machine's loopback and free) or a pasted address or
 * code (a headless machine, whose browser is elsewhere).
 */
export function terminalOperator(redirectUrl: string, input: Readable, output: Writable): Operator {
  return async (url) => {
    const stop = new AbortController();
    // Listening before the address is printed: a browser quick to approve finds the redirect there.
    const landed = await loopbackCallback(redirectUrl, stop.signal);
    output.write(
      `Open this address in a browser and approve Spool:\n\n  ${url}\n\n` +
        'Then paste the address the browser was sent back to (or its code) here: ',
    );
    const prompt = createInterface({ input, output, terminal: false });
    try {
      return await Promise.race([prompt.question('', { signal: stop.signal }), ...landed]);
    } finally {
      stop.abort();
      prompt.close();
    }
  };
}

/**
 * The redirect, caught on this machine's loopback address when the URL names one; resolves once
 * it listens (or could not: a port already taken leaves the paste).
 */
async function loopbackCallback(
  redirectUrl: string,
  signal: AbortSignal,
): Promise<Array<Promise<string>>> {
  const redirect = new URL(redirectUrl);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(redirect.hostname)) return [];
  let land: (href: string) => void = () => {};
  const landed = new Promise<string>((resolve) => (land = resolve));
  const server = createServer((req, res) => {
    const at = new URL(req.url ?? '/', redirect);
    if (at.pathname !== redirect.pathname || !at.searchParams.has('code')) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end('Spool is logged in. You can close this tab.\n');
    land(at.href);
  });
  signal.addEventListener(
    'abort',
    () => {
      server.close();
      server.closeAllConnections();
    },
    { once: true },
  );
  const listening = await new Promise<boolean>((resolve) => {
    server.on('error', () => resolve(false));
    server.listen(Number(redirect.port || 80), redirect.hostname.replace(/^\[|\]$/g, ''), () =>
      resolve(true),
    );
  });
  return listening ? [landed] : [];
}
