import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isWorkingLine } from '../../src/adapters/discord/text.ts';
import { FakeGateway } from './fake-discord-gateway.ts';
import { answerWhenDone, readBytes } from './http.js';

export const APP_ID = '100000000000000001';
export const BOT_ID = '100000000000000002';
/** The application's OAuth2 client secret (its client id is APP_ID). */
export const DISCORD_CLIENT_SECRET = 'discord-client-secret';
/** The cookie this fake's OAuth2 page reads a browser's Discord account from: the user id. */
export const DISCORD_SESSION = 'discord_session';

export interface DiscordCall {
  method: string;
  /** Decoded path below /api/v10 (the @original segment arrives URL-encoded). */
  path: string;
  body: Record<string, unknown> | undefined;
  /** Files sent with a multipart request, as Discord takes attachments. */
  files?: Array<{ name: string; content: string; bytes: Buffer }>;
}

/** A request's JSON body, from payload_json when it is multipart, with the files sent beside it. */
async function parseRequest(
  req: IncomingMessage,
): Promise<{ body?: Record<string, unknown>; files?: DiscordCall['files'] }> {
  const raw = await readBytes(req);
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data'))
    return {
      body: raw.length ? (JSON.parse(raw.toString()) as Record<string, unknown>) : undefined,
    };
  const form = await new Response(new Uint8Array(raw), {
    headers: { 'content-type': type },
  }).formData();
  const files = await Promise.all(
    [...form.entries()]
      .filter(([key]) => key.startsWith('files['))
      .map(async ([, file]) => {
        const bytes = Buffer.from(await (file as File).arrayBuffer());
        return { name: (file as File).name, content: bytes.toString(), bytes };
      }),
  );
  return { body: JSON.parse(String(form.get('payload_json'))) as Record<string, unknown>, files };
}

/** An error as Discord answers it: the HTTP status, and Discord's code and message in the body. */
export interface DiscordError {
  status: number;
  code: number;
  message: string;
  /** An HTML page in place of Discord's JSON, as the proxy before it sends one (a 413). */
  page?: string;
}

// Test files run in processes of their own against one database: each process's ids are its own,
// or one file's interaction would be another's duplicate, and its channel another's lane.
let snowflake = 200_000_000_000_000_000n + BigInt(process.pid) * 1_000_000_000n;
export const nextId = () => String(++snowflake);

/**
 * A local Discord: the REST routes Spool uses, and a gateway that says HELLO, answers IDENTIFY
 * with READY, acknowledges heartbeats, and dispatches the INTERACTION_CREATE events a test sends.
 */
export class FakeDiscord {
  readonly calls: DiscordCall[] = [];
  /**
   * REST calls to refuse, decided per call: a status (429 rate-limited, 5xx), or Discord's error as
   * it sends one (40005 for a file too large); refused ones are kept apart.
   */
  refuse?: (call: DiscordCall) => number | DiscordError | undefined;
  readonly refusedCalls: DiscordCall[] = [];
  commands: Array<Record<string, unknown>> = [];
  /**
   * Interaction tokens whose webhook calls (edits, follow-ups: what comes after the 3 s defer) fail
   * as expired.
   */
  readonly expiredTokens = new Set<string>();
  /** Attachments served as Discord's CDN serves them, and every download asked for. */
  private readonly attachments = new Map<string, Buffer>();
  readonly downloads: Array<{ path: string; authorization?: string }> = [];
  /** OAuth2 (scope identify): the codes given, and the user each Bearer token is for. */
  private readonly oauthCodes = new Map<string, { user: string; redirectUri: string }>();
  private readonly oauthTokens = new Map<string, string>();
  private server?: Server;
  /** The gateway: its shards, sessions, identifies and resumes. */
  readonly gateway = new FakeGateway({ botId: BOT_ID, appId: APP_ID, url: () => this.gatewayUrl });
  private readonly byNonce = new Map<string, Record<string, unknown>>();
  /** What GET /gateway/bot says of the day's identifies; each identify takes one. */
  sessionStartLimit = { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 };

  /** READY is sent once this settles: until then the gateway is still connecting. */
  set identified(connected: Promise<void>) {
    this.gateway.identified = connected;
  }

  /** The intents each client identified with, in order. */
  get intents(): number[] {
    return this.gateway.intents;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      // Discord's CDN URLs are signed in their query: the path names the file.
      const path = decodeURI(req.url?.split('?')[0] ?? '');
      const bearer = req.headers.authorization?.startsWith('Bearer ');
      if (path.startsWith('/api/v10/oauth2/') || (bearer && path === '/api/v10/users/@me'))
        return answerWhenDone(req, res, readBytes(req), (body) => this.oauth2(req, res, body));
      const file = path.startsWith('/attachments/') ? this.attachments.get(path) : undefined;
      if (file) {
        this.downloads.push({ path, authorization: req.headers.authorization });
        return void res
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-length': file.length,
          })
          .end(file);
      }
      answerWhenDone(req, res, this.route(req), ({ status, body, headers }) => {
        // Like Discord: a 204 has no body and no content type; a page is HTML.
        const page = typeof body === 'string';
        res.writeHead(status, {
          ...(body === undefined
            ? {}
            : { 'content-type': page ? 'text/html' : 'application/json' }),
          ...headers,
        });
        res.end(body === undefined ? undefined : page ? body : JSON.stringify(body));
      });
    });
    this.server.on('upgrade', (req, socket, head) =>
      this.gateway.server.handleUpgrade(req, socket, head, (ws) => this.gateway.accept(ws)),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.gateway.stop();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  callsTo(method: string, pattern: RegExp): DiscordCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  /** The edits of an interaction's deferred response, but the status lines shown while Spool works. */
  answersTo(token: string): DiscordCall[] {
    return this.callsTo('PATCH', /@original$/).filter(
      (c) => c.path.includes(`/${token}`) && !isWorkingLine(c.body?.content),
    );
  }

  /** What Spool posted to an interaction's callback: its deferral, a modal, a private answer. */
  callbacksOf(token: string): DiscordCall[] {
    return this.callsTo('POST', /\/callback$/).filter((c) => c.path.includes(`/${token}`));
  }

  async waitFor(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out; calls: ${JSON.stringify(this.calls.map((c) => `${c.method} ${c.path}`))}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Serves `bytes` where a Discord CDN `url` names a file (its path); returns the URL here, signed
   * query and all, for a payload to carry in its place.
   */
  serve(url: string, bytes: Buffer): string {
    const { pathname, search } = new URL(url);
    this.attachments.set(decodeURI(pathname), bytes);
    return `http://127.0.0.1:${this.port}${pathname}${search}`;
  }

  /**
   * A copy of an interaction's payload with each attachment it resolves served here (its contents
   * `contentsOf(filename)`), where its URL now points.
   */
  serveAttachments<T extends Record<string, unknown>>(
    payload: T,
    contentsOf: (filename: string) => string,
  ): T {
    const copy = structuredClone(payload);
    const attachments =
      (
        copy.data as {
          resolved?: { attachments?: Record<string, { url: string; filename: string }> };
        }
      ).resolved?.attachments ?? {};
    for (const attachment of Object.values(attachments))
      attachment.url = this.serve(attachment.url, Buffer.from(contentsOf(attachment.filename)));
    return copy;
  }

  /** Dispatches a MESSAGE_CREATE exactly as given, as the gateway would. */
  dispatchMessage(d: Record<string, unknown>): void {
    this.gateway.dispatch('MESSAGE_CREATE', d);
  }

  /** Dispatches a MESSAGE_UPDATE (an edit, or an embed added) or a deletion exactly as given. */
  dispatchMessageChange(
    event: 'MESSAGE_UPDATE' | 'MESSAGE_DELETE' | 'MESSAGE_DELETE_BULK',
    d: Record<string, unknown>,
  ): void {
    this.gateway.dispatch(event, d);
  }

  /** Dispatches a MESSAGE_REACTION_ADD or MESSAGE_REACTION_REMOVE exactly as given. */
  dispatchReaction(
    event: 'MESSAGE_REACTION_ADD' | 'MESSAGE_REACTION_REMOVE',
    d: Record<string, unknown>,
  ): void {
    this.gateway.dispatch(event, d);
  }

  /**
   * A message people wrote, as GET /channels/{channel}/messages/{id} answers it (what Discord
   * leaves of it without the Message Content intent is the test's to say).
   */
  readonly messages = new Map<string, Record<string, unknown>>();

  /** Each channel's guild, as the interactions in it named it. */
  private readonly guildOf = new Map<string, string>();
  /** The threads Spool started, as GET /channels/{thread} answers. */
  private readonly threads = new Map<string, Record<string, unknown>>();

  /**
   * Guild members' roles, as GET /guilds/{guild}/members/{user} answers: by `user`, a member of
   * every guild; by `guild/user`, of that one alone.
   */
  readonly memberRoles = new Map<string, string[]>();

  /** Direct messages' channels, by id: the person of each, as GET /channels/{channel} answers. */
  readonly dms = new Map<string, string>();

  /** The guilds Spool is in, as GET /users/@me/guilds lists them (a name left out: none given). */
  readonly guilds: Array<{ id: string; name?: string }> = [];

  /** Dispatches a GUILD_CREATE exactly as given (a guild Spool is in, its roles), as the gateway would. */
  dispatchGuild(d: Record<string, unknown>): void {
    this.gateway.dispatch('GUILD_CREATE', d);
  }

  /** Dispatches an INTERACTION_CREATE exactly as given, as the gateway would. */
  dispatchInteraction(d: Record<string, unknown>): void {
    this.gateway.dispatch('INTERACTION_CREATE', d);
  }

  /** Dispatches a slash command as the gateway would; returns the interaction (id, token). */
  sendCommand(options: {
    name: string;
    options?: Array<{ name: string; value: string }>;
    guildId?: string;
    channelId: string;
    userId?: string;
    roles?: string[];
    id?: string;
    token?: string;
    /** Sent as /ask's `file` option, resolved as Discord resolves an uploaded attachment. */
    attachment?: { filename: string; contentType: string; bytes: Buffer };
    /**
     * Fields of the interaction left out, as some payloads come without them (`entitlements`,
     * `channel`).
     */
    omit?: string[];
  }): { id: string; token: string } {
    const data = {
      id: nextId(),
      name: options.name,
      type: 1,
      options: [
        ...(options.options ?? []).map((o) => ({ ...o, type: 3 })),
        ...this.attachmentOption(options.attachment),
      ],
      ...this.resolved(options.attachment),
    };
    return this.interact(2, data, options);
  }

  /**
   * Dispatches a click on a button of a message Spool posted, as the gateway would; returns the
   * interaction (id, token).
   */
  clickButton(options: {
    customId: string;
    messageId: string;
    guildId?: string;
    channelId: string;
    userId?: string;
    roles?: string[];
    /**
     * The message is an interaction's response (a deferred `/ask`'s), as Discord marks one: by the
     * application's webhook, with the interaction's metadata.
     */
    responseTo?: { interactionId: string; userId: string };
  }): { id: string; token: string } {
    const { responseTo } = options;
    const message = {
      ...this.message(options.channelId, { content: 'prompt' }),
      id: options.messageId,
      ...(responseTo
        ? {
            type: 20,
            webhook_id: APP_ID,
            application_id: APP_ID,
            interaction_metadata: {
              id: responseTo.interactionId,
              type: 2,
              user: { id: responseTo.userId, username: 'alice', discriminator: '0', avatar: null },
              authorizing_integration_owners: {},
            },
          }
        : {}),
    };
    return this.interact(3, { custom_id: options.customId, component_type: 2 }, options, {
      message,
    });
  }

  /** Dispatches the submission of a modal Spool showed, with what was typed in each input. */
  submitModal(options: {
    customId: string;
    messageId: string;
    values: Record<string, string>;
    guildId?: string;
    channelId: string;
    userId?: string;
  }): { id: string; token: string } {
    const message = {
      ...this.message(options.channelId, { content: 'prompt' }),
      id: options.messageId,
    };
    const components = Object.entries(options.values).map(([custom_id, value]) => ({
      type: 1,
      components: [{ type: 4, custom_id, value }],
    }));
    return this.interact(5, { custom_id: options.customId, components }, options, { message });
  }

  private interact(
    type: number,
    data: unknown,
    options: {
      guildId?: string;
      channelId: string;
      userId?: string;
      roles?: string[];
      id?: string;
      token?: string;
      omit?: string[];
    },
    extra: Record<string, unknown> = {},
  ): { id: string; token: string } {
    const id = options.id ?? nextId();
    const token = options.token ?? `token-${id}`;
    if (options.guildId) this.guildOf.set(options.channelId, options.guildId);
    const user = {
      id: options.userId ?? '300000000000000001',
      username: 'alice',
      discriminator: '0',
      global_name: 'Alice',
      avatar: null,
    };
    const interaction = {
      id,
      application_id: APP_ID,
      type,
      token,
      version: 1,
      locale: 'en-US',
      guild_locale: 'en-US',
      app_permissions: '0',
      entitlements: [],
      authorizing_integration_owners: {},
      context: options.guildId ? 0 : 1,
      channel_id: options.channelId,
      channel: {
        id: options.channelId,
        type: options.guildId ? 0 : 1,
        guild_id: options.guildId,
        name: 'general',
      },
      data,
      ...extra,
      ...(options.guildId
        ? {
            guild_id: options.guildId,
            member: {
              user,
              roles: options.roles ?? [],
              permissions: '0',
              joined_at: new Date().toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
              nick: null,
              avatar: null,
            },
          }
        : { user }),
    };
    for (const field of options.omit ?? []) delete (interaction as Record<string, unknown>)[field];
    this.gateway.dispatch('INTERACTION_CREATE', interaction);
    return { id, token };
  }

  private readonly attachmentIds = new Map<object, string>();

  private attachmentOption(attachment?: {
    filename: string;
  }): Array<{ name: string; type: number; value: string }> {
    return attachment ? [{ name: 'file', type: 11, value: this.attachmentId(attachment) }] : [];
  }

  private resolved(attachment?: { filename: string; contentType: string; bytes: Buffer }): {
    resolved?: unknown;
  } {
    if (!attachment) return {};
    const id = this.attachmentId(attachment);
    const path = `/attachments/${id}/${attachment.filename}`;
    this.attachments.set(path, attachment.bytes);
    const url = `http://127.0.0.1:${this.port}${path}`;
    return {
      resolved: {
        attachments: {
          [id]: {
            id,
            filename: attachment.filename,
            size: attachment.bytes.length,
            url,
            proxy_url: url,
            content_type: attachment.contentType,
          },
        },
      },
    };
  }

  private attachmentId(attachment: object): string {
    if (!this.attachmentIds.has(attachment)) this.attachmentIds.set(attachment, nextId());
    return this.attachmentIds.get(attachment)!;
  }

  private message(
    channelId: string,
    body: Record<string, unknown> | undefined,
  ): Record<string, unknown> {
    return {
      id: nextId(),
      channel_id: channelId,
      type: 0,
      content: body?.content ?? '',
      author: { id: BOT_ID, username: 'spool', discriminator: '0', bot: true, avatar: null },
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      flags: body?.flags ?? 0,
    };
  }

  /**
   * Discord's OAuth2 with `identify`: its page sends the browser's Discord account (its session
   * cookie) back with a code at once, as for a person who allowed the app before; the code is
   * exchanged (form-encoded, with the client secret) for a Bearer token that /users/@me names.
   */
  private oauth2(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://discord');
    const json = (status: number, value: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    this.calls.push({ method: req.method ?? 'GET', path: url.pathname.slice(7), body: undefined });
    if (url.pathname.endsWith('/oauth2/authorize')) {
      const q = url.searchParams;
      const user = (req.headers.cookie ?? '')
        .split(';')
        .map((c) => c.trim())
        .find((c) => c.startsWith(`${DISCORD_SESSION}=`))
        ?.slice(DISCORD_SESSION.length + 1);
      if (q.get('client_id') !== APP_ID || q.get('scope') !== 'identify')
        return void res.writeHead(400).end('invalid client or scope');
      if (!user) return void res.writeHead(200).end('Log in to Discord');
      const code = randomUUID();
      this.oauthCodes.set(code, { user, redirectUri: q.get('redirect_uri') ?? '' });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname.endsWith('/oauth2/token')) {
      const form = new URLSearchParams(body.toString());
      const issued = this.oauthCodes.get(form.get('code') ?? '');
      this.oauthCodes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== APP_ID || form.get('client_secret') !== DISCORD_CLIENT_SECRET)
        return json(401, { error: 'invalid_client' });
      if (!issued || issued.redirectUri !== form.get('redirect_uri'))
        return json(400, { error: 'invalid_grant' });
      const token = randomUUID();
      this.oauthTokens.set(token, issued.user);
      return json(200, {
        access_token: token,
        token_type: 'Bearer',
        expires_in: 604800,
        scope: 'identify',
      });
    }
    const user = this.oauthTokens.get(req.headers.authorization?.slice('Bearer '.length) ?? '');
    if (!user) return json(401, { message: '401: Unauthorized', code: 0 });
    return json(200, {
      id: user,
      username: `user${user}`,
      discriminator: '0',
      avatar: null,
      global_name: null,
    });
  }

  /** A page of the guilds, as Discord gives them: by id, `limit` of them (at most 200) `after` one. */
  private guildPage(query: URLSearchParams) {
    const after = BigInt(query.get('after') ?? 0);
    const limit = Math.min(Number(query.get('limit') ?? 200), 200);
    return this.guilds
      .filter(({ id }) => BigInt(id) > after)
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .slice(0, limit)
      .map(({ id, name }) => ({
        id,
        ...(name === undefined ? {} : { name }),
        icon: null,
        owner: false,
        permissions: '0',
        features: [],
      }));
  }

  private async route(
    req: IncomingMessage,
  ): Promise<{ status: number; body?: unknown; headers?: Record<string, string> }> {
    const { body, files } = await parseRequest(req);
    const path = decodeURIComponent((req.url ?? '').split('?')[0]!).replace(/^\/api\/v10/, '');
    const method = req.method ?? 'GET';
    const call = { method, path, body, ...(files ? { files } : {}) };
    // Refused before anything happens, as Discord refuses a rate-limited call: nothing was created.
    const refused = this.refuse?.(call);
    if (refused === 429) {
      this.refusedCalls.push(call);
      return {
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: 0.5, global: false },
        headers: { 'retry-after': '1', 'x-ratelimit-scope': 'user' },
      };
    }
    if (refused) {
      this.refusedCalls.push(call);
      const { status, code, message, page } =
        typeof refused === 'number'
          ? { status: refused, code: 0, message: 'upstream error', page: undefined }
          : refused;
      return { status, body: page ?? { message, code } };
    }
    this.calls.push(call);
    const token = /^\/webhooks\/\d+\/([^/]+)/.exec(path)?.[1];
    if (token && this.expiredTokens.has(token))
      return { status: 401, body: { message: 'Invalid Webhook Token', code: 50027 } };

    if (method === 'GET' && path === '/gateway/bot') {
      const identifies = this.gateway.logins.filter((l) => l.kind === 'identify').length;
      const limit = this.sessionStartLimit;
      return {
        status: 200,
        body: {
          url: this.gatewayUrl,
          shards: this.gateway.shardCount,
          session_start_limit: { ...limit, remaining: Math.max(0, limit.remaining - identifies) },
        },
      };
    }
    if (method === 'GET' && path === '/users/@me')
      return {
        status: 200,
        body: { id: BOT_ID, username: 'spool', discriminator: '0', bot: true, avatar: null },
      };
    if (/^\/applications\/\d+(\/guilds\/\d+)?\/commands$/.test(path)) {
      if (method === 'PUT')
        this.commands = (body as unknown as Array<Record<string, unknown>>).map((c) => ({
          id: nextId(),
          application_id: APP_ID,
          version: nextId(),
          default_member_permissions: null,
          type: 1,
          nsfw: false,
          ...c,
        }));
      return { status: 200, body: this.commands };
    }
    if (method === 'POST' && /^\/interactions\/\d+\/[^/]+\/callback$/.test(path))
      return { status: 204 };
    const channelId = '0';
    if (method === 'PATCH' && /^\/webhooks\/\d+\/[^/]+\/messages\/[^/]+$/.test(path))
      return { status: 200, body: this.message(channelId, body) };
    if (method === 'POST' && /^\/webhooks\/\d+\/[^/]+$/.test(path))
      return { status: 200, body: this.message(channelId, body) };
    const channel = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (method === 'POST' && channel) {
      // Discord's enforce_nonce: a repeat of a recent nonce gets the message it already created.
      const nonce = body?.enforce_nonce === true ? String(body.nonce) : undefined;
      const created = (nonce && this.byNonce.get(nonce)) || this.message(channel[1]!, body);
      if (nonce) this.byNonce.set(nonce, created);
      return { status: 200, body: created };
    }
    const edited = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
    if (method === 'PATCH' && edited)
      return { status: 200, body: { ...this.message(edited[1]!, body), id: edited[2] } };
    if (method === 'DELETE' && edited) return { status: 204 };
    const written = edited && this.messages.get(edited[2]!);
    if (method === 'GET' && edited)
      return written && written.channel_id === edited[1]
        ? { status: 200, body: written }
        : { status: 404, body: { message: 'Unknown Message', code: 10008 } };
    if (method === 'POST' && /^\/channels\/\d+\/typing$/.test(path)) return { status: 204 };
    const member = /^\/guilds\/(\d+)\/members\/(\d+)$/.exec(path);
    const roles =
      member &&
      (this.memberRoles.get(`${member[1]}/${member[2]}`) ?? this.memberRoles.get(member[2]!));
    if (method === 'GET' && path === '/users/@me/guilds')
      return { status: 200, body: this.guildPage(new URL(req.url ?? '', 'http://x').searchParams) };
    if (method === 'GET' && member)
      return roles
        ? {
            status: 200,
            body: {
              user: { id: member[2], username: 'alice', discriminator: '0', avatar: null },
              roles,
              joined_at: new Date().toISOString(),
              deaf: false,
              mute: false,
              flags: 0,
            },
          }
        : { status: 404, body: { message: 'Unknown Member', code: 10007 } };
    if (method === 'POST' && path === '/users/@me/channels')
      return {
        status: 200,
        body: { id: nextId(), type: 1, recipients: [{ id: body?.recipient_id }] },
      };
    const thread = /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/.exec(path);
    if (method === 'POST' && thread) {
      const started = {
        id: nextId(),
        type: 11,
        guild_id: this.guildOf.get(thread[1]!),
        parent_id: thread[1],
        name: body?.name,
      };
      this.threads.set(started.id, started);
      return { status: 201, body: started };
    }
    const known = /^\/channels\/(\d+)$/.exec(path);
    if (method === 'GET' && known && this.threads.has(known[1]!))
      return { status: 200, body: this.threads.get(known[1]!) };
    const dm = known && this.dms.get(known[1]!);
    if (method === 'GET' && dm) {
      const recipient = { id: dm, username: `user${dm}`, discriminator: '0', avatar: null };
      return { status: 200, body: { id: known[1], type: 1, recipients: [recipient] } };
    }
    return { status: 404, body: { message: `no route ${method} ${path}`, code: 0 } };
  }
}
