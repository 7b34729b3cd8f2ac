import { randomBytes } from 'node:crypto';
import {
  auth,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import type { Person, SignInListing } from '../../../core/ports/parked/sign-ins.ts';
import type { HttpServerConfig, OAuthConfig } from '../config/config.ts';

export type { Person } from '../../../core/ports/parked/sign-ins.ts';
import {
  clientInformationOf,
  clientMetadataOf,
  keptClient,
  REFRESH_MARGIN_MS,
  type OAuthIdentity,
} from './oauth.ts';

/** What Spool keeps of one person's sign-in to one server. The store seals it: it holds tokens. */
export interface PersonRecord {
  /** The server it belongs to: a record kept for another URL is never used, nor sent anywhere. */
  serverUrl: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the access token expires (ms since the epoch). */
  expiresAt?: number;
  discovery?: OAuthDiscoveryState;
}

/** A sign-in link sent to one person for one call, until it is used. The store seals its secrets. */
export interface PendingSignIn {
  /** The random `state` of the authorization URL: the only key to this row. */
  state: string;
  server: string;
  person: Person;
  /** The parked call that is woken once the person has signed in; none for `/spool login`. */
  toolCallId?: string;
  codeVerifier: string;
  /** The record as the flow left it: the client it registered, what discovery found. */
  record: PersonRecord;
  /** The authorization server's page the browser is sent to, once it is known to be the person's. */
  authorizationUrl: string;
  expiresAt: Date;
}

/** Where people's sign-ins and pending links live: the database, sealed (src/store/credentials/person-vault.ts). */
export interface PersonVault {
  read(server: string, person: Person): Promise<PersonRecord | undefined>;
  /** Keeps a record that holds tokens; `issuer` is the authorization server that issued them. */
  write(server: string, person: Person, record: PersonRecord, issuer?: string): Promise<void>;
  /** Forgets a sign-in; false when there was none. */
  remove(server: string, person: Person): Promise<boolean>;
  /** The sign-in to `server` kept last, of anyone: what Spool lists its tools with. */
  latest(server: string): Promise<{ person: Person; record: PersonRecord } | undefined>;
  /** The sign-ins in a workspace: one person's, or everyone's when `user` is not given. */
  list(where: { platform: string; workspace: string; user?: string }): Promise<SignInListing[]>;
  /** Keeps a link about to be sent. */
  pend(signIn: PendingSignIn): Promise<void>;
  /** The link with this `state`, unused and unexpired, left as it is. */
  peek(state: string): Promise<PendingSignIn | undefined>;
  /**
   * The link with this `state`, marked used: once, across every replica. Undefined when there is
   * none, it was used already or it expired.
   */
  claim(state: string): Promise<PendingSignIn | undefined>;
}

/** The authorization a server asked of a person: the URL to send them, and what it is bound to. */
export interface AskedSignIn {
  url: string;
  state: string;
  codeVerifier: string;
  reason: 'none' | 'expired' | 'revoked' | 'insufficient_scope';
}

type PersonServer = HttpServerConfig & { oauth: OAuthConfig };

/**
 * The MCP SDK's OAuth client for one person's use of one server (authorization code with PKCE).
 * Tokens are written through to the vault only once the person has signed in; what an
 * authorization under way needs (its verifier, the client it registered) travels with its link.
 */
export class PersonOAuthProvider implements OAuthClientProvider {
  private verifier?: string;
  private pendingState?: string;
  /** The sign-in the server asked for last, if any since this provider was opened. */
  asked?: AskedSignIn;
  private saving: Promise<void> = Promise.resolve();
  /** Whether this provider held tokens (the SDK clears them when the server refuses them). */
  private hadTokens = false;

  constructor(
    private readonly server: PersonServer,
    readonly person: Person,
    private readonly vault: PersonVault,
    private readonly identity: OAuthIdentity,
    private record: PersonRecord,
    /** Resuming a link: the verifier it was sent with. */
    verifier?: string,
  ) {
    this.verifier = verifier;
  }

  static async open(
    server: PersonServer,
    person: Person,
    vault: PersonVault,
    identity: OAuthIdentity,
  ): Promise<PersonOAuthProvider> {
    const provider = new PersonOAuthProvider(server, person, vault, identity, {
      serverUrl: server.url.href,
    });
    await provider.reload();
    return provider;
  }

  /** Re-reads the vault: the person may have signed in or out on another replica. */
  async reload(): Promise<void> {
    const stored = await this.vault.read(this.server.name, this.person);
    this.record =
      stored?.serverUrl === this.server.url.href ? stored : { serverUrl: this.server.url.href };
    if (this.record.tokens) this.hadTokens = true;
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

  /** A fresh random `state` for each authorization: it is the link's only key. */
  state(): string {
    this.pendingState = randomBytes(32).toString('base64url');
    return this.pendingState;
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

  saveTokens(tokens: OAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const expiresAt = tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : undefined;
    this.verifier = undefined;
    return this.save({ tokens, expiresAt }, ctx?.issuer);
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (!this.pendingState || !this.verifier)
      throw new Error('the SDK asked for an authorization without a state or a verifier');
    this.asked = {
      url: authorizationUrl.href,
      state: this.pendingState,
      codeVerifier: this.verifier,
      reason: this.reasonFor(authorizationUrl),
    };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no sign-in is under way');
    return this.verifier;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    return this.save({ discovery });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    // An identity provider is its own authorization server: no resource metadata names it.
    const { authorizationServer } = this.server.oauth;
    return (
      this.record.discovery ??
      (authorizationServer ? { authorizationServerUrl: authorizationServer } : undefined)
    );
  }

  /** The record as it stands, for a link that carries it until the person signs in. */
  get current(): PersonRecord {
    return this.record;
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    if (scope === 'verifier') return void (this.verifier = undefined);
    const cleared: Partial<PersonRecord> = {
      all: { client: undefined, tokens: undefined, discovery: undefined },
      client: { client: undefined },
      tokens: { tokens: undefined, expiresAt: undefined },
      discovery: { discovery: undefined },
    }[scope];
    this.record = { ...this.record, ...cleared };
    // Tokens that no longer serve are no sign-in: the person is asked again.
    if (!this.record.tokens) {
      this.saving = this.saving.then(() =>
        this.vault.remove(this.server.name, this.person).then(() => {}),
      );
      return this.saving;
    }
    return this.save({});
  }

  /** Refreshes an access token about to expire, through the SDK, before a request uses it. */
  async refreshIfExpiring(): Promise<void> {
    const { tokens, expiresAt } = this.record;
    if (!tokens?.refresh_token || !expiresAt || expiresAt - Date.now() > REFRESH_MARGIN_MS) return;
    await auth(this, { serverUrl: this.server.url });
  }

  /**
   * Why the person is asked: no sign-in; one past its expiry (and refresh); one the server asks a
   * wider scope of; else one the server no longer takes.
   */
  private reasonFor(url: URL): AskedSignIn['reason'] {
    const { tokens, expiresAt } = this.record;
    if (!tokens) return this.hadTokens ? 'revoked' : 'none';
    if (expiresAt && expiresAt <= Date.now()) return 'expired';
    const granted = new Set((tokens.scope ?? '').split(' ').filter(Boolean));
    const wanted = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
    return wanted.some((s) => !granted.has(s)) ? 'insufficient_scope' : 'revoked';
  }

  private save(change: Partial<PersonRecord>, issuer?: string): Promise<void> {
    this.record = { ...this.record, ...change };
    if (this.record.tokens) this.hadTokens = true;
    const record = this.record;
    // Only a sign-in is kept: a flow under way travels with its link instead.
    if (!record.tokens) return this.saving;
    const boundTo = issuer ?? record.discovery?.authorizationServerMetadata?.issuer;
    this.saving = this.saving.then(() =>
      this.vault.write(this.server.name, this.person, record, boundTo),
    );
    return this.saving;
  }
}
