import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

/** An unsigned JWT: what is read of an ID token here is its claims, never its signature. */
const jwt = (claims: Record<string, unknown>) =>
  `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

/**
 * An enterprise identity provider in this process: people sign in at its page (no login screen: it
 * approves as `signingInAs`), the code brings back an ID token, and an ID token is exchanged (RFC
 * 8693) for an ID-JAG that an MCP server's authorization server trusts (`subjectOf`).
 */
export class EnterpriseIdp {
  /** Whom the next approval at the sign-in page signs in. */
  signingInAs = '';
  /** Token exchanges answered, in order: whose ID token, for which resource. */
  readonly exchanges: Array<{ sub: string; resource: string }> = [];
  private readonly codes = new Map<string, { challenge: string; sub: string }>();
  private readonly idTokens = new Map<string, string>();
  private readonly grants = new Map<string, { sub: string; audience: string; resource: string }>();
  private server?: Server;
  origin = '';

  constructor(
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { status, body, location } = this.route(
          new URL(req.url ?? '/', this.origin),
          new URLSearchParams(Buffer.concat(chunks).toString()),
          req.headers.authorization,
        );
        res
          .writeHead(status, location ? { location } : { 'content-type': 'application/json' })
          .end(body === undefined ? undefined : JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://localhost:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The person's ID tokens are no longer taken: an exchange with one is refused. */
  revoke(sub: string): void {
    for (const [token, owner] of this.idTokens) if (owner === sub) this.idTokens.delete(token);
  }

  /** Whom an ID-JAG names, if this identity provider issued it for `audience` and `resource`. */
  subjectOf(grant: string, audience: string, resource: string): string | undefined {
    const issued = this.grants.get(grant);
    this.grants.delete(grant);
    return issued?.audience === audience && issued.resource === resource ? issued.sub : undefined;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private route(
    url: URL,
    form: URLSearchParams,
    authorization: string | undefined,
  ): { status: number; body?: unknown; location?: string } {
    switch (url.pathname) {
      case '/.well-known/oauth-authorization-server':
      case '/.well-known/openid-configuration':
        return {
          status: 200,
          body: {
            issuer: this.origin,
            authorization_endpoint: `${this.origin}/authorize`,
            token_endpoint: `${this.origin}/token`,
            response_types_supported: ['code'],
            grant_types_supported: ['authorization_code', TOKEN_EXCHANGE],
            code_challenge_methods_supported: ['S256'],
            token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
            scopes_supported: ['openid', 'email'],
          },
        };
      case '/authorize': {
        const q = url.searchParams;
        const code = randomBytes(16).toString('hex');
        this.codes.set(code, { challenge: q.get('code_challenge')!, sub: this.signingInAs });
        const back = new URL(q.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        return { status: 302, location: back.href };
      }
      case '/token':
        if (!this.authenticated(form, authorization))
          return { status: 401, body: { error: 'invalid_client' } };
        return form.get('grant_type') === TOKEN_EXCHANGE ? this.exchange(form) : this.code(form);
      default:
        return { status: 404 };
    }
  }

  /** Spool's client here: by HTTP Basic or in the form. */
  private authenticated(form: URLSearchParams, authorization: string | undefined): boolean {
    const basic = /^Basic (.+)$/.exec(authorization ?? '')?.[1];
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent)
      : [form.get('client_id'), form.get('client_secret')];
    return id === this.clientId && secret === this.clientSecret;
  }

  private code(form: URLSearchParams) {
    const issued = this.codes.get(form.get('code') ?? '');
    this.codes.delete(form.get('code') ?? '');
    const challenge = createHash('sha256')
      .update(form.get('code_verifier') ?? '')
      .digest('base64url');
    if (!issued || issued.challenge !== challenge)
      return { status: 400, body: { error: 'invalid_grant' } };
    const now = Math.floor(Date.now() / 1000);
    const idToken = jwt({
      iss: this.origin,
      sub: issued.sub,
      aud: this.clientId,
      iat: now,
      exp: now + 3600,
    });
    this.idTokens.set(idToken, issued.sub);
    const accessToken = randomBytes(16).toString('hex');
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 3600,
        id_token: idToken,
      },
    };
  }

  private exchange(form: URLSearchParams) {
    const sub = this.idTokens.get(form.get('subject_token') ?? '');
    if (!sub || form.get('requested_token_type') !== ID_JAG)
      return { status: 400, body: { error: 'invalid_grant' } };
    const audience = form.get('audience') ?? '';
    const resource = form.get('resource') ?? '';
    const grant = randomBytes(16).toString('hex');
    this.grants.set(grant, { sub, audience, resource });
    this.exchanges.push({ sub, resource });
    return {
      status: 200,
      body: { access_token: grant, issued_token_type: ID_JAG, token_type: 'N_A', expires_in: 300 },
    };
  }
}
