import { randomBytes } from 'node:crypto';
import { auth, IssuerMismatchError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { errorMessage, SignInRequiredError } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import type { HttpServerConfig, McpConfig, OAuthConfig } from '../config/config.ts';
import type { PlatformSignIn } from '../../../core/ports/platform/platform-sign-in.ts';
import { LinkCookie } from './link-cookie.ts';
import type { OAuthIdentity, StoredOAuthProvider } from './oauth.ts';
import type {
  Person,
  SignInLink,
  SignInListing,
  SignInPort,
} from '../../../core/ports/parked/sign-ins.ts';
import {
  PersonOAuthProvider,
  type AskedSignIn,
  type PendingSignIn,
  type PersonVault,
} from './person-oauth.ts';

/** How long a sign-in link can be followed. */
export const SIGN_IN_LINK_MS = 15 * 60_000;

export type PersonServer = HttpServerConfig & { oauth: OAuthConfig };

/** The servers of mcp.json used with each person's own sign-in (`"identity": "person"`). */
export function personServers(config: McpConfig): PersonServer[] {
  return config.servers.filter(
    (s): s is PersonServer => s.kind === 'http' && s.identity === 'person' && !!s.oauth,
  );
}

export interface SignInOptions {
  vault: PersonVault;
  /** The redirect address (PUBLIC_URL + SIGN_IN_CALLBACK_PATH) and Spool's client metadata. */
  identity: OAuthIdentity;
  /** Where the links sent to people point: PUBLIC_URL + SIGN_IN_LINK_PATH. */
  linkUrl: string;
  /**
   * How each platform checks who follows a link before it goes on to the authorization server:
   * its own sign-in, or 'local' where its one person is at this machine (the console). A link for a
   * person of a platform not here signs in nobody.
   */
  platforms: Partial<Record<string, PlatformSignIn | 'local'>>;
  /**
   * Told once a person has signed in from the link sent for this call (exactly once per link,
   * across replicas): the parked turn goes on.
   */
  onSignedIn(toolCallId: string): void | Promise<void>;
  logger: Logger;
  linkMs?: number;
}

/** What the person's browser is shown, or where it is sent on (with the link's cookie). */
export interface SignInPage {
  status: number;
  text?: string;
  location?: string;
  cookie?: string;
}

const NOT_A_LINK: SignInPage = {
  status: 400,
  text: 'This sign-in link is not one Spool sent, has expired, or was used already. Nobody was signed in. Ask again in the thread for a new link.',
};

const SENT_TO_SOMEONE_ELSE: SignInPage = {
  status: 403,
  text: 'This sign-in link was sent to someone else. Nobody was signed in: a link signs in only the person it was sent to, and it still works for them. To use the tool as yourself, ask in the thread and Spool sends you a link of your own.',
};

/** A link for a person of a platform Spool has no sign-in for (the start refuses that). */
const CANNOT_CHECK: SignInPage = {
  status: 500,
  text: 'Spool cannot check who follows links sent on this platform. Nobody was signed in.',
};

const NOT_THIS_BROWSER: SignInPage = {
  status: 403,
  text: 'This sign-in did not start from the link Spool sent, in this browser: it may have been forwarded. Nobody was signed in. Open the link Spool sent you.',
};

/**
 * People's sign-ins to the servers used with each person's own account: the links sent to them, the
 * redirect that completes one, and the sign-ins each person (or an operator) can list and end.
 */
export class SignIns implements SignInPort {
  private readonly signedIn: Array<(server: string) => void> = [];

  constructor(
    private readonly servers: PersonServer[],
    private readonly options: SignInOptions,
  ) {
    this.cookie = new LinkCookie(options.linkUrl);
  }

  private readonly cookie: LinkCookie;

  get identity(): OAuthIdentity {
    return this.options.identity;
  }

  get vault(): PersonVault {
    return this.options.vault;
  }

  /** Told the server's name each time someone signs in to it here. */
  onSignIn(listener: (server: string) => void): void {
    this.signedIn.push(listener);
  }

  /**
   * The OAuth client Spool lists `server`'s tools with: an operator's login where there is one,
   * else the sign-in of whoever signed in to it last (its tools as that person sees them). It is
   * never used for a call.
   */
  async lister(server: PersonServer, operator: StoredOAuthProvider): Promise<OAuthClientProvider> {
    if (operator.tokens()) return operator;
    const latest = await this.options.vault.latest(server.name);
    if (!latest || latest.record.serverUrl !== server.url.href) return operator;
    const { vault, identity } = this.options;
    return new PersonOAuthProvider(server, latest.person, vault, identity, latest.record);
  }

  /**
   * The error that parks a call: a link for `provider`'s person and this call, kept for the
   * redirect. The link names nobody; its `state` is bound to them here.
   */
  async required(
    server: PersonServer,
    provider: PersonOAuthProvider,
    asked: AskedSignIn,
    toolCallId: string,
  ): Promise<SignInRequiredError> {
    await this.pend(server, provider, asked, toolCallId);
    return new SignInRequiredError(server.name, this.linkTo(asked.state), asked.reason);
  }

  /**
   * A link for `person` to sign in to `server` ahead of any call (`/spool login`): 'signed_in' when
   * they are already, 'unknown' for a server not used with each person's own sign-in.
   */
  async link(serverName: string, person: Person): Promise<SignInLink> {
    const server = this.servers.find((s) => s.name === serverName);
    if (!server) return 'unknown';
    const { vault, identity } = this.options;
    const provider = await PersonOAuthProvider.open(server, person, vault, identity);
    if (provider.tokens()) return 'signed_in';
    // Discovery, registration where needed, and the authorization URL, as a call's 401 would.
    await auth(provider, { serverUrl: server.url });
    const { asked } = provider;
    if (!asked) return 'signed_in';
    await this.pend(server, provider, asked);
    return { url: this.linkTo(asked.state) };
  }

  /** The link a person is sent: Spool's own page, which first checks who follows it. */
  private linkTo(state: string): string {
    const link = new URL(this.options.linkUrl);
    link.searchParams.set('link', state);
    return link.href;
  }

  private async pend(
    server: PersonServer,
    provider: PersonOAuthProvider,
    asked: AskedSignIn,
    toolCallId?: string,
  ): Promise<void> {
    await this.options.vault.pend({
      state: asked.state,
      server: server.name,
      person: provider.person,
      ...(toolCallId ? { toolCallId } : {}),
      codeVerifier: asked.codeVerifier,
      record: provider.current,
      authorizationUrl: asked.url,
      expiresAt: new Date(Date.now() + (this.options.linkMs ?? SIGN_IN_LINK_MS)),
    });
  }

  /**
   * A link followed: the browser is sent to sign in with the chat platform first (a state it alone
   * can bring back), to show it is the person's; on the console, straight to the authorization
   * server.
   */
  async follow(query: URLSearchParams): Promise<SignInPage> {
    const state = query.get('link');
    const link = state ? await this.options.vault.peek(state) : undefined;
    if (!link) return NOT_A_LINK;
    const platform = this.options.platforms[link.person.platform];
    if (platform === 'local') return this.toAuthorizationServer(link);
    if (!platform) return CANNOT_CHECK;
    const nonce = randomBytes(24).toString('base64url');
    return {
      status: 302,
      location: platform.authorizationUrl({
        state: `${link.state}.${nonce}`,
        redirectUrl: this.options.identity.redirectUrl,
        person: link.person,
      }),
      cookie: this.cookie.set(link.state, nonce, link.expiresAt),
    };
  }

  /**
   * A redirect: from the chat platform's sign-in (its state is the link's and a nonce), or from
   * the authorization server (the link's state alone).
   */
  complete(query: URLSearchParams, cookies?: string): Promise<SignInPage> {
    const state = query.get('state') ?? '';
    const dot = state.indexOf('.');
    return dot < 0
      ? this.signIn(state, query, cookies)
      : this.identified(state.slice(0, dot), state.slice(dot + 1), query, cookies);
  }

  /**
   * Back from the platform's sign-in: on to the authorization server when it was the person the
   * link was sent to, in the browser that followed it; else nobody is signed in, and the link is
   * left for its person.
   */
  private async identified(
    state: string,
    nonce: string,
    query: URLSearchParams,
    cookies: string | undefined,
  ): Promise<SignInPage> {
    const link = await this.options.vault.peek(state);
    if (!link) return NOT_A_LINK;
    if (!LinkCookie.holds(cookies, state, nonce)) return NOT_THIS_BROWSER;
    const platform = this.options.platforms[link.person.platform];
    const code = query.get('code');
    if (!platform || platform === 'local') return CANNOT_CHECK;
    if (!code) return { status: 400, text: 'The sign-in was not completed. Nobody was signed in.' };
    const isPerson = await platform
      .isPerson(link.person, code, this.options.identity.redirectUrl)
      .catch((error: unknown) => {
        this.options.logger.warn('Could not check who followed a sign-in link', {
          server: link.server,
          platform: link.person.platform,
          error: errorMessage(error),
        });
        return undefined;
      });
    if (isPerson === undefined)
      return {
        status: 502,
        text: 'Spool could not check who you are. Nobody was signed in. Open the link again.',
      };
    if (!isPerson) {
      this.options.logger.warn('A sign-in link was followed by someone it was not sent to', {
        server: link.server,
        platform: link.person.platform,
        user: link.person.user,
      });
      return { ...SENT_TO_SOMEONE_ELSE, cookie: this.cookie.set(state, undefined, link.expiresAt) };
    }
    return this.toAuthorizationServer(link);
  }

  /** The person's browser, on to the authorization server with the proof that it is theirs. */
  private toAuthorizationServer(link: PendingSignIn): SignInPage {
    const proof = LinkCookie.proofOf(link.state, link.codeVerifier);
    return {
      status: 302,
      location: link.authorizationUrl,
      cookie: this.cookie.set(link.state, proof, link.expiresAt),
    };
  }

  /**
   * Back from the authorization server, in the browser that showed it is the person's: the link
   * with this `state` is claimed (once), the code exchanged by the SDK (which first checks the RFC
   * 9207 `iss` against the authorization server the link was made for), and the person it was
   * sent to signed in.
   */
  private async signIn(
    state: string,
    query: URLSearchParams,
    cookies: string | undefined,
  ): Promise<SignInPage> {
    const link = state ? await this.options.vault.peek(state) : undefined;
    if (!link) return NOT_A_LINK;
    if (!LinkCookie.holds(cookies, state, LinkCookie.proofOf(state, link.codeVerifier)))
      return NOT_THIS_BROWSER;
    const claimed = await this.options.vault.claim(state);
    if (!claimed) return NOT_A_LINK;
    const server = this.servers.find((s) => s.name === claimed.server);
    const code = query.get('code');
    // What the authorization server says with a refusal is not shown: it is not to be trusted.
    if (!server || !code)
      return { status: 400, text: 'The sign-in was not completed. Nobody was signed in.' };
    const provider = new PersonOAuthProvider(
      server,
      claimed.person,
      this.options.vault,
      this.options.identity,
      claimed.record,
      claimed.codeVerifier,
    );
    const resourceMetadataUrl = claimed.record.discovery?.resourceMetadataUrl;
    try {
      const result = await auth(provider, {
        serverUrl: server.url,
        authorizationCode: code,
        iss: query.get('iss') ?? undefined,
        ...(resourceMetadataUrl ? { resourceMetadataUrl: new URL(resourceMetadataUrl) } : {}),
      });
      if (result !== 'AUTHORIZED') throw new Error('the authorization server took no code');
    } catch (error) {
      if (error instanceof IssuerMismatchError)
        return {
          status: 400,
          text: `This answer did not come from the authorization server of ${server.name}. Nobody was signed in.`,
        };
      this.options.logger.warn(`Sign-in to MCP server "${server.name}" failed`, {
        server: server.name,
        error: errorMessage(error),
      });
      return { status: 502, text: `Signing in to ${server.name} failed. Nobody was signed in.` };
    }
    this.options.logger.info(`Signed in to MCP server "${server.name}"`, {
      server: server.name,
      platform: claimed.person.platform,
      user: claimed.person.user,
    });
    for (const listener of this.signedIn) listener(server.name);
    const { toolCallId } = claimed;
    // The sign-in is kept whatever happens next: a call not woken now is taken up at its deadline.
    if (toolCallId)
      await Promise.resolve(this.options.onSignedIn(toolCallId)).catch((error: unknown) =>
        this.options.logger.warn('A signed-in call could not be woken', {
          toolCallId,
          error: errorMessage(error),
        }),
      );
    return {
      status: 200,
      text: `You are signed in to ${server.name}. You can go back to the thread.`,
      cookie: this.cookie.set(state, undefined, claimed.expiresAt),
    };
  }

  /** The sign-ins in a workspace: one person's, or everyone's. */
  logins(where: { platform: string; workspace: string; user?: string }): Promise<SignInListing[]> {
    return this.options.vault.list(where);
  }

  /** Ends a person's sign-in to `server`; false when there was none. */
  logout(server: string, person: Person): Promise<boolean> {
    return this.options.vault.remove(server, person);
  }
}
