import {
  auth,
  CrossAppAccessProvider,
  discoverAuthorizationServerMetadata,
  requestJwtAuthorizationGrant,
  UnauthorizedError,
  type CrossAppAccessContext,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import type { SignInRequiredError } from '../../../core/errors.ts';
import {
  DEFAULT_MAX_TOOL_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  type IdentityProviderConfig,
  type McpConfig,
} from '../config/config.ts';
import { REFRESH_MARGIN_MS } from './oauth.ts';
import type { PersonAccess } from './person-connections.ts';
import { PersonOAuthProvider, type Person } from './person-oauth.ts';
import { personServers, type PersonServer, type SignIns } from './sign-in.ts';

/**
 * The person has no ID token to exchange (never signed in to the identity provider, or it has
 * expired), or the identity provider refused the one kept: they sign in to it (again). An
 * UnauthorizedError, so that a call cut short by it is handed back rather than answered.
 */
export class IdentityRequiredError extends UnauthorizedError {}

const isCrossApp = (server: PersonServer) => server.oauth.grant === 'cross_app_access';

/**
 * The identity provider as a server people sign in to from a link, like one used with each person's
 * own sign-in: an OpenID Connect authorization code flow whose ID token is kept, sealed.
 */
export function identityProviderServer(idp: IdentityProviderConfig): PersonServer {
  return {
    kind: 'http',
    name: idp.name,
    url: new URL(idp.issuer),
    headers: {},
    transport: 'streamable-http',
    identity: 'person',
    timeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    maxTimeoutMs: DEFAULT_MAX_TOOL_TIMEOUT_MS,
    oauth: {
      grant: 'authorization_code',
      clientId: idp.clientId,
      ...(idp.clientSecret ? { clientSecret: idp.clientSecret } : {}),
      scope: idp.scope,
      authorizationServer: idp.issuer,
    },
  };
}

/**
 * What people sign in to from links: the servers used with each person's own sign-in, and the
 * identity provider where a server takes cross-app access (once per person, for all such servers).
 */
export function signInServers(config: McpConfig): PersonServer[] {
  const people = personServers(config);
  const own = people.filter((s) => !isCrossApp(s));
  const idp = config.identityProvider;
  return idp && people.some(isCrossApp) ? [...own, identityProviderServer(idp)] : own;
}

/** When a JWT expires (ms since the epoch), read from its payload; undefined when it does not say. */
function expiryOf(jwt: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * People's sign-ins to the enterprise identity provider, and the exchange of their ID token for an
 * identity assertion authorization grant (ID-JAG, RFC 8693 token exchange) for one server.
 */
export class IdentityProvider {
  readonly server: PersonServer;
  private tokenEndpoint?: Promise<string>;

  constructor(
    private readonly config: IdentityProviderConfig,
    private readonly signIns: SignIns,
  ) {
    this.server = identityProviderServer(config);
  }

  get name(): string {
    return this.config.name;
  }

  /** The person's sign-in to the identity provider, refreshed where it is about to expire. */
  private async signIn(person: Person): Promise<PersonOAuthProvider> {
    const { vault, identity } = this.signIns;
    const provider = await PersonOAuthProvider.open(this.server, person, vault, identity);
    // A refresh that fails leaves the ID token as it was: too old, it asks for a sign-in.
    await provider.refreshIfExpiring().catch(() => {});
    return provider;
  }

  /** The person's ID token, while it is good; undefined when they have to sign in (again). */
  async idToken(person: Person): Promise<string | undefined> {
    const idToken = (await this.signIn(person)).tokens()?.id_token;
    const expiresAt = idToken ? expiryOf(idToken) : undefined;
    return idToken && (!expiresAt || expiresAt - Date.now() > REFRESH_MARGIN_MS)
      ? idToken
      : undefined;
  }

  /** The link that parks `toolCallId` until the person has signed in to the identity provider. */
  async required(person: Person, toolCallId: string): Promise<SignInRequiredError> {
    const provider = await this.signIn(person);
    // A sign-in with no good ID token is no sign-in: its tokens are forgotten, and it starts anew.
    await provider.invalidateCredentials('tokens');
    await auth(provider, { serverUrl: this.server.url });
    if (!provider.asked) throw new Error(`${this.name} did not say where to sign in`);
    return this.signIns.required(this.server, provider, provider.asked, toolCallId);
  }

  /** The ID-JAG for `person` to present to the server `context` describes. */
  async grant(person: Person | undefined, context: CrossAppAccessContext): Promise<string> {
    const idToken = person && (await this.idToken(person));
    if (!person || !idToken)
      throw new IdentityRequiredError(`nobody has signed in to ${this.name} for this`);
    const { clientId, clientSecret } = this.config;
    try {
      const { jwtAuthGrant } = await requestJwtAuthorizationGrant({
        tokenEndpoint: await this.findTokenEndpoint(),
        audience: context.authorizationServerUrl,
        resource: context.resourceUrl,
        idToken,
        clientId,
        ...(clientSecret ? { clientSecret } : {}),
        ...(context.scope ? { scope: context.scope } : {}),
        fetchFn: context.fetchFn,
      });
      return jwtAuthGrant;
    } catch (error) {
      // The SDK says what the identity provider answered (never the token).
      if (!/\binvalid_grant\b/.test(String(error))) throw error;
      await this.signIns.logout(this.name, person);
      throw new IdentityRequiredError(`${this.name} no longer takes the sign-in kept`);
    }
  }

  /** The token endpoint mcp.json names, else the one the identity provider's metadata gives. */
  private findTokenEndpoint(): Promise<string> {
    const { tokenEndpoint, issuer } = this.config;
    this.tokenEndpoint ??= tokenEndpoint
      ? Promise.resolve(tokenEndpoint)
      : discoverAuthorizationServerMetadata(issuer).then((metadata) => {
          if (!metadata?.token_endpoint) throw new Error(`${this.name} names no token endpoint`);
          return metadata.token_endpoint;
        });
    // A failed discovery is tried again by the next exchange.
    this.tokenEndpoint.catch(() => (this.tokenEndpoint = undefined));
    return this.tokenEndpoint;
  }

  /**
   * The OAuth client Spool lists a cross-app server's tools with: the exchange for whoever signed in
   * to the identity provider last (its tools as that person sees them). It is never used for a call.
   */
  async lister(server: PersonServer): Promise<CrossAppProvider> {
    const latest = await this.signIns.vault.latest(this.name);
    return new CrossAppProvider(server, latest?.person, this);
  }
}

/**
 * The SDK's cross-app access client for one person's use of one server: the person's ID-JAG, then
 * the jwt-bearer grant at the server's authorization server with Spool's client there. The token is
 * kept in memory until it is about to expire; the next request exchanges again.
 */
export class CrossAppProvider extends CrossAppAccessProvider {
  private expiresAt?: number;

  constructor(
    server: PersonServer,
    readonly person: Person | undefined,
    idp: IdentityProvider,
  ) {
    const { clientId, clientSecret, issuer } = server.oauth;
    super({
      clientId: clientId!,
      clientSecret: clientSecret!,
      clientName: 'Spool',
      assertion: (context) => idp.grant(person, context),
      ...(issuer ? { expectedIssuer: issuer } : {}),
    });
  }

  override tokens(): OAuthTokens | undefined {
    const { expiresAt } = this;
    return expiresAt && expiresAt - Date.now() <= REFRESH_MARGIN_MS ? undefined : super.tokens();
  }

  override saveTokens(tokens: OAuthTokens): void {
    this.expiresAt = tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : undefined;
    super.saveTokens(tokens);
  }
}

/** Each person's calls to a cross-app server: their identity provider sign-in, exchanged. */
export function crossAppAccess(
  server: PersonServer,
  idp: IdentityProvider,
): PersonAccess<CrossAppProvider> {
  return {
    provider: (person) => new CrossAppProvider(server, person, idp),
    before: async (provider, toolCallId) => {
      const person = provider.person!;
      if (!(await idp.idToken(person))) throw await idp.required(person, toolCallId);
    },
    signInAfter: async (error, provider, toolCallId) =>
      error instanceof IdentityRequiredError
        ? idp.required(provider.person!, toolCallId)
        : undefined,
  };
}
