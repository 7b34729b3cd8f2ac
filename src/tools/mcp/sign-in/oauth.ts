import {
  auth,
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  type DpopSession,
} from '@modelcontextprotocol/client';
import type { HttpServerConfig, OAuthConfig } from '../config/config.ts';
import { dpopSession, type StoredDpopKey } from './dpop-key.ts';
import { WorkloadIdentityProvider } from './workload-identity.ts';

/** What Spool keeps of one server's authorization. The store seals it: it holds tokens. */
export interface OAuthRecord {
  /** The server it belongs to: a record kept for another URL is never used, nor sent anywhere. */
  serverUrl: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the access token expires (ms since the epoch), from `expires_in` as it was saved. */
  expiresAt?: number;
  codeVerifier?: string;
  discovery?: OAuthDiscoveryState;
  /** The authorization an operator has to complete, as the server last asked for it (its scope). */
  pendingAuthorization?: string;
  /** The key the tokens are bound to, where mcp.json asks for DPoP. */
  dpopKey?: StoredDpopKey;
}

/** Where OAuth records live: the database, sealed (src/store/credentials/oauth-vault.ts). */
export interface OAuthVault {
  read(server: string): Promise<OAuthRecord | undefined>;
  write(server: string, record: OAuthRecord): Promise<void>;
}

/** How Spool presents itself to an authorization server for an operator's login. */
export interface OAuthIdentity {
  /** Where the authorization server sends the operator back with the code. */
  redirectUrl: string;
  /** An https URL serving Spool's client metadata document (CIMD), preferred to registering. */
  clientMetadataUrl?: string;
}

/** A token this close to its expiry is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * The MCP SDK's OAuth client, for an operator's login (authorization code with PKCE), with every
 * piece of state written through to the vault so that another process (the bot, `mcp login`) and
 * the next start see it.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  private saving: Promise<void> = Promise.resolve();
  private dpopKey?: Promise<DpopSession>;

  private constructor(
    private readonly server: HttpServerConfig & { oauth: OAuthConfig },
    private readonly vault: OAuthVault,
    private readonly identity: OAuthIdentity,
    private record: OAuthRecord,
  ) {}

  static async open(
    server: HttpServerConfig & { oauth: OAuthConfig },
    vault: OAuthVault,
    identity: OAuthIdentity,
  ): Promise<StoredOAuthProvider> {
    const stored = await vault.read(server.name);
    const record = stored?.serverUrl === server.url.href ? stored : { serverUrl: server.url.href };
    return new StoredOAuthProvider(server, vault, identity, record);
  }

  /** Re-reads the vault: another process may have logged in. */
  async reload(): Promise<void> {
    const stored = await this.vault.read(this.server.name);
    if (stored?.serverUrl === this.server.url.href) this.record = stored;
  }

  /** The URL an operator has to open to log in, when the server asked for one. */
  get pendingAuthorization(): string | undefined {
    return this.record.pendingAuthorization;
  }

  get redirectUrl(): string {
    return this.identity.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.identity.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataOf(this.server.oauth, this.identity.redirectUrl);
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return clientInformationOf(this.server.oauth, this.record.client);
  }

  saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    return this.save({ client: keptClient(this.server.oauth, client) });
  }

  tokens(): OAuthTokens | undefined {
    return this.record.tokens;
  }

  saveTokens(tokens: OAuthTokens): Promise<void> {
    const expiresAt = tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : undefined;
    return this.save({
      tokens,
      expiresAt,
      pendingAuthorization: undefined,
      codeVerifier: undefined,
    });
  }

  redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    return this.save({ pendingAuthorization: authorizationUrl.href });
  }

  saveCodeVerifier(codeVerifier: string): Promise<void> {
    return this.save({ codeVerifier });
  }

  codeVerifier(): string {
    if (!this.record.codeVerifier) throw new Error('no login is under way: run mcp login again');
    return this.record.codeVerifier;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    return this.save({ discovery });
  }

  /**
   * What discovery found, only while a login is under way: its callback leg must reach the
   * authorization server it started with. Any other authorization (a refresh, a token refused)
   * discovers afresh, so a server that now names another authorization server is followed there,
   * and Spool registers with it (SEP-2352; the SDK discards a client and tokens stamped with the
   * old issuer).
   */
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.record.codeVerifier ? this.record.discovery : undefined;
  }

  invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const cleared: Partial<OAuthRecord> = {
      all: { client: undefined, tokens: undefined, codeVerifier: undefined, discovery: undefined },
      client: { client: undefined },
      tokens: { tokens: undefined, expiresAt: undefined },
      verifier: { codeVerifier: undefined },
      discovery: { discovery: undefined },
    }[scope];
    return this.save(cleared);
  }

  /** The SDK signs the token request and every request with it, where mcp.json asks for DPoP. */
  dpop(): Promise<DpopSession> | undefined {
    if (!this.server.oauth.dpop) return undefined;
    // One session for the process: it holds the nonces the servers hand out.
    return (this.dpopKey ??= dpopSession(this.record.dpopKey, (dpopKey) => this.save({ dpopKey })));
  }

  /** Refreshes an access token about to expire, through the SDK, before a request uses it. */
  async refreshIfExpiring(): Promise<void> {
    const { tokens, expiresAt } = this.record;
    if (!tokens?.refresh_token || !expiresAt || expiresAt - Date.now() > REFRESH_MARGIN_MS) return;
    await auth(this, { serverUrl: this.server.url });
  }

  /**
   * Exchanges the code an operator brings back for tokens; the SDK checks first that it came from
   * the authorization server it was asked of (RFC 9207 `iss`).
   */
  async finishLogin({ code, iss }: LoginCallback): Promise<void> {
    const result = await auth(this, {
      serverUrl: this.server.url,
      authorizationCode: code,
      iss,
      resourceMetadataUrl: this.record.discovery?.resourceMetadataUrl
        ? new URL(this.record.discovery.resourceMetadataUrl)
        : undefined,
    });
    if (result !== 'AUTHORIZED')
      throw new Error('the authorization server did not accept the code');
  }

  private save(change: Partial<OAuthRecord>): Promise<void> {
    this.record = { ...this.record, ...change };
    const record = this.record;
    this.saving = this.saving.then(() => this.vault.write(this.server.name, record));
    return this.saving;
  }
}

/** How Spool describes itself when it registers (DCR) with an authorization server. */
export function clientMetadataOf(oauth: OAuthConfig, redirectUrl: string): OAuthClientMetadata {
  const { clientSecret, scope } = oauth;
  return {
    client_name: 'Spool',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: clientSecret ? 'client_secret_basic' : 'none',
    ...(scope ? { scope } : {}),
  };
}

/** The client Spool is to a server: the one pre-registered in mcp.json, else the one registered. */
export function clientInformationOf(
  oauth: OAuthConfig,
  stored: OAuthClientInformationMixed | undefined,
): OAuthClientInformationMixed | undefined {
  const { clientId, clientSecret } = oauth;
  if (!clientId) return stored;
  // Pre-registered: the SDK stamps it with its issuer once used; that stamp is kept.
  const stamped = stored?.client_id === clientId ? stored : undefined;
  return {
    ...stamped,
    client_id: clientId,
    ...(clientSecret ? { client_secret: clientSecret } : {}),
  };
}

/** What is stored of a client: a pre-registered secret stays in the config. */
export function keptClient(
  oauth: OAuthConfig,
  client: OAuthClientInformationMixed,
): OAuthClientInformationMixed {
  const kept = { ...client };
  if (oauth.clientSecret) delete kept.client_secret;
  return kept;
}

/** The SDK's provider for the configured grant: a machine client, or an operator's login. */
export async function oauthProvider(
  server: HttpServerConfig & { oauth: OAuthConfig },
  vault: OAuthVault,
  identity: OAuthIdentity,
): Promise<OAuthClientProvider> {
  const { grant, clientId, clientSecret, privateKey, signingAlgorithm, scope, assertionFile } =
    server.oauth;
  if (grant === 'authorization_code') return StoredOAuthProvider.open(server, vault, identity);
  if (grant === 'jwt_bearer')
    return new WorkloadIdentityProvider({
      clientId: clientId!,
      assertionFile: assertionFile!,
      scope,
    });
  // Machine clients get a fresh token whenever they need one: nothing of theirs is stored.
  if (privateKey)
    return new PrivateKeyJwtProvider({
      clientId: clientId!,
      privateKey,
      algorithm: signingAlgorithm ?? 'RS256',
      scope,
    });
  return new ClientCredentialsProvider({ clientId: clientId!, clientSecret: clientSecret!, scope });
}

/** What the authorization server sends an operator back with: the code, and who issued it. */
export interface LoginCallback {
  code: string;
  /** The authorization server, when it names itself in the redirect (RFC 9207). */
  iss?: string;
}

/**
 * The callback in what an operator pastes: the whole address the browser was sent back to, or the
 * code alone (which an authorization server that names itself in the address does not take).
 */
export function callbackFromPaste(pasted: string): LoginCallback | undefined {
  const text = pasted.trim();
  if (!text) return undefined;
  if (!/^https?:\/\//.test(text)) return { code: text };
  const params = new URL(text).searchParams;
  const code = params.get('code');
  const iss = params.get('iss');
  return code ? { code, ...(iss === null ? {} : { iss }) } : undefined;
}

/** What an operator runs to log Spool in to `server`. */
export const loginCommand = (server: string): string => `npm start -- mcp login ${server}`;

/** Spool's client metadata document (CIMD): its client id is the address that serves it. */
export function clientMetadataDocument(
  identity: OAuthIdentity & { clientMetadataUrl: string; signInRedirectUrl?: string },
) {
  return {
    client_id: identity.clientMetadataUrl,
    client_name: 'Spool',
    // An operator's login, and people's sign-ins where Spool has a public address.
    redirect_uris: [
      identity.redirectUrl,
      ...(identity.signInRedirectUrl ? [identity.signInRedirectUrl] : []),
    ],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}
