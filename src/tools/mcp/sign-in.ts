import { auth, IssuerMismatchError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { errorMessage, SignInRequiredError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Route } from '../../observability.ts';
import type { HttpServerConfig, McpConfig, OAuthConfig } from './config.ts';
import { SIGN_IN_CALLBACK_PATH } from '../settings.ts';
import type { OAuthIdentity, StoredOAuthProvider } from './oauth.ts';
import type { Person, SignInLink, SignInListing, SignInPort } from '../../core/ports/sign-ins.ts';
import { PersonOAuthProvider, type AskedSignIn, type PersonVault } from './person-oauth.ts';

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
  /**
   * Told once a person has signed in from the link sent for this call (exactly once per link,
   * across replicas): the parked turn goes on.
   */
  onSignedIn(toolCallId: string): void | Promise<void>;
  logger: Logger;
  linkMs?: number;
}

/** What the person's browser is shown when the authorization server sends them back. */
export interface SignInPage {
  status: number;
  text: string;
}

const NOT_A_LINK: SignInPage = {
  status: 400,
  text: 'This sign-in link is not one Spool sent, has expired, or was used already. Nobody was signed in. Ask again in the thread for a new link.',
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
  ) {}

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
    return new SignInRequiredError(server.name, asked.url, asked.reason);
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
    return { url: asked.url };
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
      expiresAt: new Date(Date.now() + (this.options.linkMs ?? SIGN_IN_LINK_MS)),
    });
  }

  /**
   * The redirect: the link with this `state` is claimed (once), the code exchanged by the SDK
   * (which first checks the RFC 9207 `iss` against the authorization server the link was made
   * for), and the person it was sent to signed in.
   */
  async complete(query: URLSearchParams): Promise<SignInPage> {
    const state = query.get('state');
    const claimed = state ? await this.options.vault.claim(state) : undefined;
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

/**
 * GET SIGN_IN_CALLBACK_PATH on Spool's HTTP server, answered by `signIns` once the bot has started
 * (503 before: the authorization server's redirect can be reloaded).
 */
export function signInRoute(signIns: () => SignIns | undefined): Route {
  return {
    path: SIGN_IN_CALLBACK_PATH,
    method: 'GET',
    handler: (req, res) => {
      const send = ({ status, text }: SignInPage) =>
        res
          .writeHead(status, {
            'content-type': 'text/plain; charset=utf-8',
            'cache-control': 'no-store',
            'referrer-policy': 'no-referrer',
          })
          .end(`${text}\n`);
      const desk = signIns();
      if (!desk) return send({ status: 503, text: 'Spool is starting; reload in a moment.' });
      const query = new URL(req.url ?? '/', 'http://spool').searchParams;
      desk
        .complete(query)
        .then(send, () => send({ status: 500, text: 'Signing in failed. Nobody was signed in.' }));
    },
  };
}
