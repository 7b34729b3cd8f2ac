import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import type { EnterpriseIdp } from './enterprise-idp.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * An MCP server behind its own authorization server (one origin), in this process, so that a test
 * sees which token each call carried. The authorization server approves whoever opens its page (no
 * login screen), registers clients (DCR), checks PKCE and issues a fresh token per code. Listing
 * needs no token (or, with `listing` 'token', one too); calls do. `whoami` answers "hello";
 * `write_note` needs the `write` scope and answers 403 insufficient_scope without it. With an
 * enterprise identity provider it trusts (cross-app access), it also grants a token for an ID-JAG
 * that provider issued for it (the jwt-bearer grant), to the client `spool-mcp`.
 */
export class PersonMcpServer {
  constructor(
    private readonly listing: 'open' | 'token' = 'open',
    private readonly idp?: EnterpriseIdp,
  ) {}

  /** Whom each token granted for an ID-JAG acts for. */
  readonly subjects = new Map<string, string>();

  /** The token each call carried, in order, with the tool it called. */
  readonly calls: Array<{ tool: string; token: string }> = [];
  /** The `state` of each authorization page opened, in order: who reached the server's sign-in. */
  readonly authorizations: string[] = [];
  private readonly tokens = new Map<string, { scope: string }>();
  private readonly codes = new Map<
    string,
    { challenge: string; redirectUri: string; scope: string }
  >();
  private server?: Server;
  origin = '';

  async start(): Promise<this> {
    const handler = createMcpHandler(() => this.build());
    this.server = createServer((req, res) => {
      this.route(req, handler).then(
        (response) => void send(res, response),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://localhost:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get url(): string {
    return `${this.origin}/mcp`;
  }

  /** The authorization server forgets a token: the next call with it gets 401. */
  revoke(token: string): void {
    this.tokens.delete(token);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private build(): McpServer {
    const server = new McpServer({ name: 'person', version: '1.0.0' });
    const record =
      (tool: string) => (_args: unknown, ctx: { http?: { authInfo?: { token: string } } }) => {
        this.calls.push({ tool, token: ctx.http?.authInfo?.token ?? '' });
        return { content: [{ type: 'text' as const, text: `${tool}: hello` }] };
      };
    const empty = fromJsonSchema({ type: 'object', properties: {} });
    server.registerTool(
      'whoami',
      { description: 'Says hello', inputSchema: empty },
      record('whoami'),
    );
    server.registerTool(
      'write_note',
      { description: 'Writes a note (scope write)', inputSchema: empty },
      record('write_note'),
    );
    return server;
  }

  private async route(
    req: IncomingMessage,
    handler: ReturnType<typeof createMcpHandler>,
  ): Promise<Response> {
    const url = new URL(req.url ?? '/', this.origin);
    const body = await read(req);
    const json = (value: unknown, status = 200) => Response.json(value, { status });
    switch (url.pathname) {
      case '/.well-known/oauth-protected-resource/mcp':
      case '/.well-known/oauth-protected-resource':
        return json({ resource: this.url, authorization_servers: [this.origin] });
      case '/.well-known/oauth-authorization-server':
        return json({
          issuer: this.origin,
          authorization_endpoint: `${this.origin}/authorize`,
          token_endpoint: `${this.origin}/token`,
          registration_endpoint: `${this.origin}/register`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', ...(this.idp ? [JWT_BEARER] : [])],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
          scopes_supported: ['mcp', 'write'],
        });
      case '/register': {
        const metadata = JSON.parse(body.toString()) as Record<string, unknown>;
        return json({ ...metadata, client_id: randomBytes(8).toString('hex') }, 201);
      }
      case '/authorize': {
        const q = url.searchParams;
        this.authorizations.push(q.get('state') ?? '');
        const code = randomBytes(16).toString('hex');
        const redirectUri = q.get('redirect_uri')!;
        this.codes.set(code, {
          challenge: q.get('code_challenge')!,
          redirectUri,
          scope: q.get('scope') ?? 'mcp',
        });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      case '/token': {
        const form = new URLSearchParams(body.toString());
        if (form.get('grant_type') === JWT_BEARER) return json(...this.jwtBearer(form, req));
        const issued = this.codes.get(form.get('code') ?? '');
        this.codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (
          !issued ||
          issued.challenge !== challenge ||
          issued.redirectUri !== form.get('redirect_uri')
        )
          return json({ error: 'invalid_grant' }, 400);
        const token = randomBytes(24).toString('hex');
        this.tokens.set(token, { scope: issued.scope });
        return json({
          access_token: token,
          token_type: 'Bearer',
          expires_in: 3600,
          scope: issued.scope,
        });
      }
      case '/mcp':
        return this.mcp(req, body, handler);
      default:
        return new Response('not found', { status: 404 });
    }
  }

  /** A token for an ID-JAG the trusted identity provider issued for this server, to `spool-mcp`. */
  private jwtBearer(form: URLSearchParams, req: IncomingMessage): [unknown, number] {
    const client = Buffer.from(req.headers.authorization?.replace(/^Basic /, '') ?? '', 'base64');
    if (client.toString() !== 'spool-mcp:mcp-secret') return [{ error: 'invalid_client' }, 401];
    const sub = this.idp?.subjectOf(form.get('assertion') ?? '', this.origin, this.url);
    if (!sub) return [{ error: 'invalid_grant' }, 400];
    const token = randomBytes(24).toString('hex');
    this.tokens.set(token, { scope: 'mcp' });
    this.subjects.set(token, sub);
    return [{ access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'mcp' }, 200];
  }

  /** Anyone may list; a call needs a token, and `write_note` its scope. */
  private async mcp(
    req: IncomingMessage,
    body: Buffer,
    handler: ReturnType<typeof createMcpHandler>,
  ): Promise<Response> {
    const request = new Request(`${this.origin}/mcp`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) =>
        [v ?? []].flat().map((value): [string, string] => [k, value]),
      ),
      body: body.length > 0 ? new Uint8Array(body) : undefined,
    });
    const message =
      body.length > 0
        ? (JSON.parse(body.toString()) as { method?: string; params?: { name?: string } })
        : {};
    if (message.method !== 'tools/call' && this.listing === 'open') return handler.fetch(request);
    const metadata = `${this.origin}/.well-known/oauth-protected-resource/mcp`;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const granted = this.tokens.get(token);
    if (!granted)
      return new Response(null, {
        status: 401,
        headers: { 'www-authenticate': `Bearer resource_metadata="${metadata}"` },
      });
    if (message.params?.name === 'write_note' && !granted.scope.split(' ').includes('write'))
      return new Response(null, {
        status: 403,
        headers: {
          'www-authenticate': `Bearer error="insufficient_scope", scope="mcp write", resource_metadata="${metadata}"`,
        },
      });
    return handler.fetch(request, {
      authInfo: { token, clientId: 'spool', scopes: granted.scope.split(' ') },
    });
  }
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function send(res: import('node:http').ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, [...response.headers].flat());
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}
