import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { answerWhenDone, readBody, readBytes } from './http.js';

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  /** When it arrived (Date.now()). */
  at: number;
  /** A response_url call's id (see `responseUrl`). */
  responseId?: string;
  /** The token it was made with (its Authorization header, or its `token` argument). */
  token?: string;
}

export const BOT_USER = 'UBOT';
export const TEAM = 'T1';
/** The app's client credentials, for Sign in with Slack. */
export const SLACK_CLIENT = { id: '1000.2000', secret: 'slack-client-secret' };
/** The cookie this fake's sign-in reads a browser's Slack account from: `TEAM:USER`. */
export const SLACK_SESSION = 'slack_session';

/** A browser's cookies, by name. */
const cookiesOf = (req: IncomingMessage): Map<string, string> =>
  new Map(
    (req.headers.cookie ?? '')
      .split(';')
      .map((c) => c.trim().split('=') as [string, string])
      .filter(([name]) => name),
  );

/** The file a multipart upload carries (Slack's SDK posts it as a form), or the raw body. */
/** An uploaded file's bytes: the whole body, or the file part of a multipart one. */
async function uploadedFile(req: IncomingMessage): Promise<Buffer> {
  const raw = await readBytes(req);
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) return raw;
  const form = await new Response(new Uint8Array(raw), {
    headers: { 'content-type': type },
  }).formData();
  const file = [...form.values()].find((value): value is File => typeof value !== 'string');
  return file ? Buffer.from(await file.arrayBuffer()) : raw;
}

function parseArgs(body: string, contentType = ''): Record<string, unknown> {
  if (contentType.includes('application/json'))
    return body ? (JSON.parse(body) as Record<string, unknown>) : {};
  return Object.fromEntries(new URLSearchParams(body));
}

/**
 * The slice of the Slack Web API Spool uses, on 127.0.0.1, recording every call; plus the
 * Socket Mode WebSocket that apps.connections.open hands out, and `response_url` endpoints.
 */
export class FakeSlack {
  readonly calls: SlackCall[] = [];
  /**
   * conversations.replies answers, by thread ts; replies the app posts are added, with their
   * metadata.
   */
  readonly threads = new Map<
    string,
    Array<{
      ts: string;
      /** A reply's thread (Slack sets it on the root too, once it has replies). */
      thread_ts?: string;
      user?: string;
      bot_id?: string;
      text: string;
      metadata?: unknown;
      files?: Array<{ id: string; name: string }>;
    }>
  >();
  /** conversations.members answers, by channel (no one, for a channel not set). */
  readonly members = new Map<string, string[]>();
  /** Whether the app is declared as an agent: agents.sessions.* answer. */
  agentApp = true;
  /** The time zone users.info gives each person (none for anyone else). */
  readonly timeZones = new Map<string, string>();
  /** Whether assistant.threads.setStatus is allowed for this app. */
  statusApi = true;
  /**
   * Web API calls to refuse (429 with Retry-After, or 5xx), decided per call; refused ones are kept
   * apart.
   */
  refuse?: (call: SlackCall) => { status: number; headers?: Record<string, string> } | undefined;
  readonly refusedCalls: SlackCall[] = [];
  /**
   * Web API calls Slack answers `ok: false` with this error (a missing scope, uploads turned off),
   * decided per call.
   */
  platformError?: (call: SlackCall) => string | undefined;
  /** Answers a method in place of this fake (installs: test/support/fake-slack-installs.ts). */
  answer?: (call: SlackCall) => object | undefined;
  /** Serves a page of Slack's site (not the Web API), when it takes the request. */
  page?: (req: IncomingMessage, res: import('node:http').ServerResponse) => boolean;
  /**
   * Files served as Slack's file host serves them, to the bot token only; and every download asked
   * for.
   */
  private readonly files = new Map<string, Buffer>();
  /** What files.info tells of each shared file, by id. */
  private readonly fileInfo = new Map<string, Record<string, unknown>>();
  readonly downloads: Array<{ path: string; authorization?: string }> = [];
  /**
   * Files the app uploaded (files.uploadV2: an upload URL, the bytes, then completion), by file id.
   */
  readonly uploads = new Map<
    string,
    {
      filename: string;
      snippetType?: string;
      body?: string;
      bytes?: Buffer;
      completed?: Record<string, unknown>;
    }
  >();
  /** Sign in with Slack: the codes given, and the access tokens they were exchanged for. */
  private readonly oidcCodes = new Map<
    string,
    { team: string; user: string; redirectUri: string }
  >();
  private readonly oidcTokens = new Map<string, { team: string; user: string }>();
  private server?: Server;
  /** TCP connections accepted: a client that keeps them alive opens few. */
  connections = 0;
  private readonly sockets = new WebSocketServer({ noServer: true });
  private socket?: WebSocket;
  private readonly acks = new Map<string, () => void>();
  private sequence = 0;
  /** The ts each chat.postMessage got, by the index of its call. */
  private readonly posted = new Map<number, string>();
  /** Like Slack's: seconds since the epoch, unique and growing, so `oldest` filters work. */
  private nextTs(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.sequence).padStart(6, '0')}`;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  responseUrl(id: string): string {
    return `http://127.0.0.1:${this.port}/response/${id}`;
  }

  /** The ts Slack gave a chat.postMessage call (one of `calls`). */
  tsOf(call: SlackCall): string | undefined {
    return this.posted.get(this.calls.indexOf(call));
  }

  /** What was posted to `responseUrl(id)`, in order. */
  responseArgs(id: string): Array<Record<string, unknown>> {
    return this.calls
      .filter((c) => c.method === 'response_url' && c.responseId === id)
      .map((c) => c.args);
  }

  /** The texts posted to `responseUrl(id)`, in order. */
  responses(id: string): string[] {
    return this.responseArgs(id).map((args) => String(args.text));
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      if (req.url?.startsWith('/files/')) return this.download(req, res);
      if (req.url?.startsWith('/openid/connect/authorize')) return this.authorize(req, res);
      if (this.page?.(req, res)) return;
      if (req.url?.startsWith('/upload/')) {
        const upload = this.uploads.get(req.url.slice('/upload/'.length));
        return answerWhenDone(req, res, uploadedFile(req), (bytes) => {
          if (upload) Object.assign(upload, { body: bytes.toString(), bytes });
          res.writeHead(upload ? 200 : 404).end('OK');
        });
      }
      answerWhenDone(req, res, this.handle(req), (body) => {
        if ('refused' in body) {
          const { status, headers } = body.refused as {
            status: number;
            headers?: Record<string, string>;
          };
          res.writeHead(status, headers);
          return void res.end(
            status === 429 ? JSON.stringify({ ok: false, error: 'ratelimited' }) : 'upstream error',
          );
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    this.server.on('connection', () => this.connections++);
    this.server.on('upgrade', (req, socket, head) => {
      this.sockets.handleUpgrade(req, socket, head, (ws) => {
        this.socket = ws;
        ws.on('message', (data) => {
          const { envelope_id: id } = JSON.parse(data.toString()) as { envelope_id?: string };
          if (id) this.acks.get(id)?.();
        });
        ws.send(
          JSON.stringify({
            type: 'hello',
            num_connections: 1,
            debug_info: { host: 'fake', approximate_connection_time: 3600 },
            connection_info: { app_id: 'A1' },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.socket?.terminate();
    this.sockets.close();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** A file as a message event lists it, served by this fake at its url_private_download. */
  shareFile(
    name: string,
    bytes: Buffer,
    mimetype: string,
    declaredSize = bytes.length,
  ): Record<string, unknown> {
    const id = `F${randomUUID().slice(0, 8).toUpperCase()}`;
    return this.serveFile(
      {
        id,
        name,
        title: name,
        mimetype,
        filetype: name.split('.').pop(),
        size: declaredSize,
        url_private: '',
        url_private_download: '',
      },
      bytes,
    );
  }

  /**
   * Serves a file an event lists: its URLs, where it has them, move to this fake's file host, and
   * files.info knows it.
   */
  serveFile(file: Record<string, unknown>, bytes: Buffer): Record<string, unknown> {
    const id = String(file.id);
    const path = `/files/${id}/${String(file.name ?? 'file')}`;
    const url = `${this.apiUrl.replace(/\/api$/, '')}${path}`;
    this.files.set(path, bytes);
    for (const key of ['url_private', 'url_private_download'])
      if (typeof file[key] === 'string') file[key] = url;
    this.fileInfo.set(id, { ...file, url_private: url, url_private_download: url });
    return file;
  }

  /**
   * A file shared in a Slack Connect channel: the event names it only, and files.info tells the
   * rest.
   */
  shareConnectFile(name: string, bytes: Buffer, mimetype: string): Record<string, unknown> {
    const { id } = this.shareFile(name, bytes, mimetype);
    return {
      id,
      mode: 'file_access',
      file_access: 'check_file_info',
      created: Math.floor(Date.now() / 1000),
      timestamp: Math.floor(Date.now() / 1000),
      user: 'U1',
    };
  }

  private download(req: IncomingMessage, res: import('node:http').ServerResponse): void {
    const path = decodeURI(req.url ?? '');
    this.downloads.push({ path, authorization: req.headers.authorization });
    const bytes = this.files.get(path);
    // Without the bot token Slack answers with its sign-in page, not the file.
    if (!bytes || req.headers.authorization !== 'Bearer xoxb-test')
      return void res.writeHead(bytes ? 302 : 404, { location: 'https://slack.com/signin' }).end();
    res
      .writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': bytes.length,
      })
      .end(bytes);
  }

  /**
   * Sign in with Slack's page: the browser's Slack account (its session cookie) is sent back with
   * a code at once, as Slack does for a signed-in person who allowed the app before; a browser
   * signed in to no workspace sees a sign-in form.
   */
  private authorize(req: IncomingMessage, res: import('node:http').ServerResponse): void {
    const q = new URL(req.url ?? '/', 'http://slack').searchParams;
    this.calls.push({
      method: 'openid.connect.authorize',
      args: Object.fromEntries(q),
      at: Date.now(),
    });
    const [team, user] = (cookiesOf(req).get(SLACK_SESSION) ?? '').split(':');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (q.get('client_id') !== SLACK_CLIENT.id || !q.get('scope')?.split(' ').includes('openid'))
      return void res.writeHead(400).end('invalid_client or scope');
    if (!team || !user) return void res.writeHead(200).end('Sign in to your workspace');
    const code = randomUUID();
    this.oidcCodes.set(code, { team, user, redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: back.href }).end();
  }

  /** openid.connect.token and openid.connect.userInfo, as Slack answers them. */
  private openId(method: string, args: Record<string, unknown>, authorization?: string): object {
    if (method === 'openid.connect.token') {
      const issued = this.oidcCodes.get(String(args.code));
      this.oidcCodes.delete(String(args.code));
      if (args.client_id !== SLACK_CLIENT.id || args.client_secret !== SLACK_CLIENT.secret)
        return { ok: false, error: 'invalid_client_id' };
      if (!issued || issued.redirectUri !== args.redirect_uri)
        return { ok: false, error: 'invalid_code' };
      const token = `xoxp-${randomUUID()}`;
      this.oidcTokens.set(token, issued);
      return { ok: true, access_token: token, token_type: 'Bearer', id_token: 'not.checked.here' };
    }
    const who = this.oidcTokens.get(/^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '');
    if (!who) return { ok: false, error: 'invalid_auth' };
    return {
      ok: true,
      sub: who.user,
      'https://slack.com/user_id': who.user,
      'https://slack.com/team_id': who.team,
    };
  }

  callsTo(method: string): Array<Record<string, unknown>> {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out; calls so far: ${JSON.stringify(this.calls.map((c) => c.method))}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Delivers an event over Socket Mode and resolves when the app acknowledges it. */
  async sendSocketEvent(payload: Record<string, unknown>, retryAttempt = 0): Promise<void> {
    await (
      await this.pushSocketEvent(payload, retryAttempt)
    ).acked;
  }

  /**
   * Delivers an event over Socket Mode without waiting: `isAcked` tells whether the app has
   * acknowledged it yet.
   */
  async pushSocketEvent(
    payload: Record<string, unknown>,
    retryAttempt = 0,
    type = 'events_api',
  ): Promise<{ acked: Promise<void>; isAcked(): boolean }> {
    await this.waitFor(() => this.socket !== undefined);
    const envelopeId = randomUUID();
    let done = false;
    const acked = new Promise<void>((resolve) =>
      this.acks.set(envelopeId, () => ((done = true), resolve())),
    );
    const retry = retryAttempt > 0 ? 'timeout' : '';
    this.socket!.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        payload,
        accepts_response_payload: type === 'interactive',
        retry_attempt: retryAttempt,
        retry_reason: retry,
      }),
    );
    return { acked, isAcked: () => done };
  }

  /**
   * Delivers a click (an interactive payload) over Socket Mode; resolves when the app acknowledges
   * it.
   */
  async sendSocketInteraction(payload: Record<string, unknown>): Promise<void> {
    await (
      await this.pushSocketEvent(payload, 0, 'interactive')
    ).acked;
  }

  /** The approval prompts the app posted (messages with buttons), oldest first. */
  prompts(channel: string): Array<{
    ts: string;
    /** The value of its first button: an approval's call, a question's id. */
    toolCallId: string;
    threadTs: string;
    text: string;
    blocks: Array<Record<string, unknown>>;
  }> {
    return this.calls.flatMap((c, i) => {
      if (c.method !== 'chat.postMessage' || c.args.channel !== channel || !isPrompt(c.args))
        return [];
      const blocks = blocksOf(c.args) as Array<{ elements?: Array<{ value?: string }> }>;
      const toolCallId = blocks.flatMap((b) => b.elements ?? [])[0]?.value ?? '';
      return [
        {
          ts: this.posted.get(i) ?? '',
          toolCallId,
          threadTs: String(c.args.thread_ts),
          text: String(c.args.text),
          blocks,
        },
      ];
    });
  }

  private async handle(req: IncomingMessage): Promise<object> {
    const url = req.url ?? '';
    const args = parseArgs(await readBody(req), req.headers['content-type']);
    if (url.startsWith('/response/')) {
      this.calls.push({ method: 'response_url', args, at: Date.now(), responseId: url.slice(10) });
      return { ok: true };
    }
    const method = url.replace(/^\/api\//, '').split('?')[0]!;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (typeof args.token === 'string' ? args.token : undefined);
    const call = { method, args, at: Date.now(), ...(token ? { token } : {}) };
    // Refused before anything happens, as Slack refuses a rate-limited call: nothing was posted.
    const refused = this.refuse?.(call);
    if (refused) {
      this.refusedCalls.push(call);
      return { refused };
    }
    this.calls.push(call);
    const error = this.platformError?.(call);
    if (error) return { ok: false, error };
    const answered = this.answer?.(call);
    if (answered) return answered;
    switch (method) {
      case 'openid.connect.token':
      case 'openid.connect.userInfo':
        return this.openId(method, args, req.headers.authorization);
      case 'auth.test':
        return {
          ok: true,
          user_id: BOT_USER,
          bot_id: 'BBOT',
          team_id: TEAM,
          user: 'spool',
          team: 'Test Team',
          url: 'https://test.slack.com/',
        };
      case 'apps.connections.open':
        return { ok: true, url: `ws://127.0.0.1:${this.port}/link` };
      case 'chat.postMessage': {
        const ts = this.nextTs();
        this.posted.set(this.calls.length - 1, ts);
        if (args.thread_ts) {
          const metadata =
            typeof args.metadata === 'string' ? JSON.parse(args.metadata) : args.metadata;
          const thread = this.threads.get(String(args.thread_ts)) ?? [];
          this.threads.set(String(args.thread_ts), [
            ...thread,
            { ts, bot_id: 'BBOT', text: String(args.text), metadata },
          ]);
        }
        return { ok: true, channel: args.channel, ts, message: { text: args.text } };
      }
      case 'chat.postEphemeral':
        return { ok: true, message_ts: this.nextTs() };
      case 'conversations.replies': {
        const oldest = Number(args.oldest ?? 0);
        const latest = args.latest === undefined ? Infinity : Number(args.latest);
        // As Slack does, the ts of a reply finds its whole thread.
        const thread =
          this.threads.get(String(args.ts)) ??
          [...this.threads.values()].find((t) => t.some((m) => m.ts === String(args.ts)));
        const messages = (thread ?? []).filter(
          (m) => Number(m.ts) >= oldest && Number(m.ts) <= latest,
        );
        return {
          ok: true,
          messages: args.include_all_metadata
            ? messages
            : messages.map(({ metadata: _, ...m }) => m),
          has_more: false,
        };
      }
      case 'conversations.members':
        return { ok: true, members: this.members.get(String(args.channel)) ?? [] };
      case 'files.info': {
        const file = this.fileInfo.get(String(args.file));
        return file ? { ok: true, file } : { ok: false, error: 'file_not_found' };
      }
      case 'users.info': {
        const tz = this.timeZones.get(String(args.user));
        return { ok: true, user: { id: args.user, ...(tz ? { tz } : {}) } };
      }
      case 'conversations.open':
        return { ok: true, channel: { id: `D${String(args.users)}` } };
      case 'files.getUploadURLExternal': {
        const id = `F${randomUUID().slice(0, 8).toUpperCase()}`;
        this.uploads.set(id, {
          filename: String(args.filename),
          snippetType: args.snippet_type === undefined ? undefined : String(args.snippet_type),
        });
        return { ok: true, upload_url: `http://127.0.0.1:${this.port}/upload/${id}`, file_id: id };
      }
      case 'files.completeUploadExternal': {
        const files = (
          typeof args.files === 'string' ? JSON.parse(args.files) : args.files
        ) as Array<{ id: string; title?: string }>;
        for (const { id } of files) {
          const upload = this.uploads.get(id);
          if (!upload) return { ok: false, error: 'file_not_found' };
          upload.completed = args;
        }
        // Shared into the thread as one message: the comment, with the files.
        if (args.thread_ts) {
          const thread = this.threads.get(String(args.thread_ts)) ?? [];
          const shared = files.map(({ id }) => ({ id, name: this.uploads.get(id)!.filename }));
          this.threads.set(String(args.thread_ts), [
            ...thread,
            {
              ts: this.nextTs(),
              bot_id: 'BBOT',
              text: String(args.initial_comment ?? ''),
              files: shared,
            },
          ]);
        }
        return {
          ok: true,
          files: files.map(({ id }) => ({ id, name: this.uploads.get(id)!.filename })),
        };
      }
      case 'assistant.threads.setStatus':
        return this.statusApi ? { ok: true } : { ok: false, error: 'not_allowed_token_type' };
      case 'agents.sessions.setStatus':
        return this.agentApp ? { ok: true } : { ok: false, error: 'not_allowed_token_type' };
      default:
        return { ok: true };
    }
  }
}

/** An Events API request signed the way Slack signs it (v0 HMAC-SHA256 over timestamp and body). */
export function signedRequest(
  body: string,
  signingSecret: string,
  contentType: string,
  headers: Record<string, string> = {},
  signedAtMs = Date.now(),
): RequestInit {
  const timestamp = Math.floor(signedAtMs / 1000).toString();
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
      ...headers,
    },
  };
}

let eventCounter = 0;

/** An event_callback envelope around `event`, with a fresh event id unless one is given. */
/** A posted message's blocks, however the client sent them. */
export const blocksOf = (args: Record<string, unknown>): Array<Record<string, unknown>> =>
  (typeof args.blocks === 'string' ? JSON.parse(args.blocks) : (args.blocks ?? [])) as Array<
    Record<string, unknown>
  >;

/** A prompt (buttons in an `actions` block), not an answer (which carries 👍/👎 at most). */
export const isPrompt = (args: Record<string, unknown>): boolean =>
  blocksOf(args).some((b) => b.type === 'actions');

export function eventBody(
  event: Record<string, unknown>,
  eventId = `Ev${++eventCounter}-${Date.now()}`,
): Record<string, unknown> {
  return {
    token: 'verification-token',
    team_id: TEAM,
    api_app_id: 'A1',
    event: { event_ts: event.ts, ...event },
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: TEAM, user_id: BOT_USER, is_bot: true }],
  };
}

/** A click on one of a message's buttons, as Slack sends it (block_actions). */
export function buttonClick(click: {
  user: string;
  channel: string;
  messageTs: string;
  threadTs: string;
  actionId: string;
  value: string;
  responseUrl: string;
  /** What the message's inputs hold, by block and action id (a question's form). */
  state?: Record<string, Record<string, unknown>>;
}): Record<string, unknown> {
  return {
    type: 'block_actions',
    ...(click.state ? { state: { values: click.state } } : {}),
    team: { id: TEAM, domain: 'test' },
    user: { id: click.user, username: click.user, team_id: TEAM },
    api_app_id: 'A1',
    token: 'verification-token',
    container: {
      type: 'message',
      message_ts: click.messageTs,
      channel_id: click.channel,
      is_ephemeral: false,
    },
    trigger_id: `trigger-${randomUUID()}`,
    channel: { id: click.channel, name: 'ops' },
    message: {
      type: 'message',
      ts: click.messageTs,
      thread_ts: click.threadTs,
      text: 'prompt',
      user: BOT_USER,
    },
    response_url: click.responseUrl,
    actions: [
      {
        type: 'button',
        action_id: click.actionId,
        block_id: 'approval',
        value: click.value,
        action_ts: String(Date.now() / 1000),
      },
    ],
  };
}
