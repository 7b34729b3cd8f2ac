import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  Events,
  InteractionResponseType,
  InteractionType,
  type Client,
  type Interaction,
  type ResponseLike,
  type RESTOptions,
} from 'discord.js';
import { errorMessage } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import { completeInteraction } from '../gateway.ts';

/** Where Discord posts interactions (the application's Interactions Endpoint URL ends with it). */
export const INTERACTIONS_PATH = '/discord/interactions';

/** What discord.js reads of a callback's response: nothing (Discord answers 204). */
const answered = () => new Response(null, { status: 204 }) as unknown as ResponseLike;

/** A request signed longer ago than this is refused: a replay of a captured one. */
const FRESH_FOR_MS = 5 * 60_000;
/** Discord takes no answer after 3 s; an interaction not answered by then is deferred. */
const ANSWER_WITHIN_MS = 2_500;
/** Far past any interaction Discord sends (its own limit on a modal's values is 4,000 each). */
const MAX_BODY_BYTES = 1_000_000;

/** The application's public key (General Information → Public Key, 64 hex digits) for `verify`. */
export function discordPublicKey(hex: string): KeyObject {
  // An Ed25519 public key in SPKI form: its fixed 12-byte prefix, then the 32 bytes.
  const prefix = Buffer.from('302a300506032b6570032100', 'hex');
  return createPublicKey({
    key: Buffer.concat([prefix, Buffer.from(hex, 'hex')]),
    format: 'der',
    type: 'spki',
  });
}

export type SignatureCheck = 'signed' | 'unsigned' | 'stale';

/** Whether Discord signed `timestamp + body` with `key`, and did so recently. */
export function checkSignature(
  key: KeyObject,
  request: { signature?: string; timestamp?: string; body: Buffer },
  nowMs: number,
): SignatureCheck {
  const { signature, timestamp, body } = request;
  if (!signature || !timestamp || !/^[0-9a-f]{128}$/i.test(signature)) return 'unsigned';
  const signed = Buffer.concat([Buffer.from(timestamp), body]);
  if (!verify(null, signed, key, Buffer.from(signature, 'hex'))) return 'unsigned';
  const seconds = Number(timestamp);
  return Number.isFinite(seconds) && Math.abs(nowMs - seconds * 1000) <= FRESH_FOR_MS
    ? 'signed'
    : 'stale';
}

/** The first callback of an interaction that came over HTTP: the HTTP response's body. */
interface Answer {
  contentType: string;
  body: Buffer;
}

/**
 * The interactions waiting for their answer to Discord's HTTP request. discord.js answers an
 * interaction by POSTing its callback over REST; for one that came over HTTP, that first callback
 * is the HTTP response instead (`answerOverHttp`), so the rest of the adapter answers both alike.
 */
export class PendingAnswers {
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  /** Deferred here on the deadline: discord.js's own deferral, later, is already done. */
  private readonly deferred = new Set<string>();

  wait(id: string): Promise<Answer> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  /** The deadline's deferral, given in place of the adapter's. */
  defer(id: string, answer: Answer): void {
    // An interaction already handled (`done`) takes no later callback.
    if (!this.waiting.has(id)) return;
    this.answer(id, answer);
    this.deferred.add(id);
  }

  done(id: string): void {
    this.waiting.delete(id);
    this.deferred.delete(id);
  }

  /** discord.js's REST request, with an HTTP interaction's first callback taken as its answer. */
  answerOverHttp(request: RESTOptions['makeRequest']): RESTOptions['makeRequest'] {
    return async (url, init) => {
      const [, id] = /\/interactions\/(\d+)\/[^/]+\/callback(?:\?|$)/.exec(url) ?? [];
      if (!id || init.method !== 'POST') return request(url, init);
      if (this.waiting.has(id)) {
        this.answer(id, await answerOf(init));
        return answered();
      }
      if (this.deferred.has(id) && isDeferral(init.body)) return answered();
      return request(url, init);
    };
  }

  private answer(id: string, answer: Answer): void {
    this.waiting.get(id)?.(answer);
    this.waiting.delete(id);
  }
}

/** A callback's body as an HTTP response: JSON, or the multipart of a reply with files. */
async function answerOf(init: Parameters<RESTOptions['makeRequest']>[1]): Promise<Answer> {
  const encoded = new Response(init.body as BodyInit);
  const body = Buffer.from(await encoded.arrayBuffer());
  return init.body instanceof FormData
    ? { contentType: encoded.headers.get('content-type')!, body }
    : { contentType: 'application/json', body };
}

function isDeferral(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const { type } = JSON.parse(body) as { type?: number };
  return (
    type === InteractionResponseType.DeferredChannelMessageWithSource ||
    type === InteractionResponseType.DeferredMessageUpdate
  );
}

export interface HttpInteractionDeps {
  key: KeyObject;
  applicationId: string;
  /** A client of its own, never connected, whose REST answers through `pending`. */
  client: Client;
  pending: PendingAnswers;
  /** The adapter's handling of an interaction, the gateway's own. */
  interacted(interaction: Interaction): Promise<void>;
  logger: Logger;
}

/**
 * Discord's interactions endpoint: a signed PING is answered PONG; a signed interaction is built
 * by discord.js from its raw payload, as a gateway one, and handled the same way; its first answer
 * (a deferral once stored, a private reply, a modal) is the HTTP response. Replies follow over the
 * interaction's webhook, as for the gateway's.
 */
export function interactionsHandler(deps: HttpInteractionDeps): RequestListener {
  return (req, res) =>
    void receive(deps, req, res).catch((error: unknown) => {
      deps.logger.error('Discord: an HTTP interaction failed', { error: errorMessage(error) });
      if (!res.headersSent) res.writeHead(500).end();
    });
}

async function receive(
  deps: HttpInteractionDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const body = await bodyOf(req);
  if (!body) return void res.writeHead(413).end();
  const check = checkSignature(
    deps.key,
    {
      signature: req.headers['x-signature-ed25519'] as string | undefined,
      timestamp: req.headers['x-signature-timestamp'] as string | undefined,
      body,
    },
    Date.now(),
  );
  if (check !== 'signed') return void res.writeHead(401).end(`${check} request\n`);
  const payload = jsonOf(body);
  const { id, type } = payload ?? {};
  if (!payload || typeof id !== 'string' || typeof type !== 'number')
    return void res.writeHead(400).end('not an interaction\n');
  if (type === InteractionType.Ping) return send(res, pong);
  send(res, await firstAnswer(deps, { ...payload, id, type }));
}

const pong: Answer = {
  contentType: 'application/json',
  body: Buffer.from(JSON.stringify({ type: InteractionResponseType.Pong })),
};

/**
 * The interaction's first answer: what the adapter gives first; or, when it gives none (a click on
 * no button of Spool's, an interaction already taken) or not in time, a private deferral.
 */
async function firstAnswer(
  deps: HttpInteractionDeps,
  payload: Record<string, unknown> & { id: string; type: number },
): Promise<Answer> {
  const { id } = payload;
  const answered = deps.pending.wait(id);
  // Never rejects: an interaction discord.js cannot build is logged, and deferred.
  const handled = (async () => {
    const interaction = interactionOf(
      deps.client,
      completeInteraction(payload, deps.applicationId),
    );
    if (interaction) await deps.interacted(interaction);
  })().catch((error: unknown) =>
    deps.logger.error('Discord: an HTTP interaction could not be handled', {
      error: errorMessage(error),
    }),
  );
  void handled.finally(() => deps.pending.done(id));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ANSWER_WITHIN_MS)));
  const first = await Promise.race([answered, Promise.race([handled, late]).then(() => undefined)]);
  clearTimeout(timer);
  if (first) return first;
  const deferral = deferralOf(payload.type);
  deps.pending.defer(id, deferral);
  return deferral;
}

/** A component's click acknowledged as is; anything else "thinking", only to the person. */
function deferralOf(type: number): Answer {
  const body =
    type === InteractionType.MessageComponent
      ? { type: InteractionResponseType.DeferredMessageUpdate }
      : { type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: 64 } };
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) };
}

/** The interaction discord.js builds from `data`, as for INTERACTION_CREATE (none for a kind it skips). */
function interactionOf(client: Client, data: Record<string, unknown>): Interaction | undefined {
  let built: Interaction | undefined;
  const take = (interaction: Interaction) => (built = interaction);
  client.on(Events.InteractionCreate, take);
  try {
    (
      client as unknown as { actions: { InteractionCreate: { handle(d: unknown): void } } }
    ).actions.InteractionCreate.handle(data);
  } finally {
    client.off(Events.InteractionCreate, take);
  }
  return built;
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(200, { 'content-type': answer.contentType }).end(answer.body);
}

function jsonOf(
  body: Buffer,
): (Record<string, unknown> & { id?: unknown; type?: unknown }) | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The request's body, or undefined past `MAX_BODY_BYTES`. */
async function bodyOf(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
