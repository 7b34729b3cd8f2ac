import { WebSocketServer, type WebSocket } from 'ws';

/** Who the gateway says the bot is, in READY. */
export interface GatewayIdentity {
  botId: string;
  appId: string;
  /** The gateway's URL, for READY's resume_gateway_url. */
  url(): string;
}

/** An IDENTIFY or a RESUME as Discord would log it. */
export interface GatewayLogin {
  kind: 'identify' | 'resume';
  shard: number;
  at: number;
  /** RESUME: whether the session was resumed (else Discord answered "invalid session"). */
  resumed?: boolean;
}

interface Session {
  id: string;
  shard: number;
  shardCount: number;
  /** Every event dispatched in the session, for a resume's replay. */
  events: Array<{ s: number; t: string; d: unknown }>;
  ws?: WebSocket;
  /** Closed with 1000 or 1001, or invalidated: not resumable. */
  ended: boolean;
}

/** Discord's shard of a guild: `(guild_id >> 22) % shard_count`; DMs are shard 0's. */
export const shardOf = (guildId: string | undefined, shardCount: number) =>
  guildId ? Number((BigInt(guildId) >> 22n) % BigInt(shardCount)) : 0;

/**
 * Discord's gateway as a bot's shards meet it: HELLO, IDENTIFY (with `shard: [id, count]`) answered
 * with READY, RESUME answered with the missed events and RESUMED (or "invalid session" for a session
 * that ended), heartbeats acknowledged. A session outlives its connection unless it was closed with
 * 1000 or 1001, as at Discord; events for a shard go to its session, kept for a resume while no
 * connection has it. Records every identify and resume, and each time two connections were open on
 * one shard at once (which Discord does not prevent: both would get every event).
 */
export class FakeGateway {
  readonly server = new WebSocketServer({ noServer: true });
  /** READY is sent once this settles: until then the gateway is still connecting. */
  identified: Promise<void> = Promise.resolve();
  /** The intents each client identified with, in order. */
  readonly intents: number[] = [];
  readonly logins: GatewayLogin[] = [];
  /** Shards on which a second connection identified or resumed while one was open. */
  readonly doubled: number[] = [];
  /** The shard count identifies must name (Discord closes others with 4010). */
  shardCount = 1;
  /** False: every RESUME is answered "invalid session", as Discord does for a session it dropped. */
  resumable = true;
  private readonly sessions: Session[] = [];
  private sequence = 0;
  private nextSession = 0;

  constructor(private readonly identity: GatewayIdentity) {}

  /** The shards with an open connection now, each as often as it has one. */
  connectedShards(): number[] {
    return this.sessions.filter((s) => s.ws).map((s) => s.shard);
  }

  /** Dispatches an event to the shard its guild is on (DMs: shard 0), as the gateway would. */
  dispatch(event: string, data: object): void {
    const shard = shardOf((data as { guild_id?: string }).guild_id, this.shardCount);
    const session = this.sessions.filter((s) => s.shard === shard && !s.ended).at(-1);
    if (!session) throw new Error(`no gateway session is open on shard ${shard}`);
    this.send(session, event, data);
  }

  stop(): void {
    for (const s of this.sessions) s.ws?.terminate();
    this.server.close();
  }

  accept(ws: WebSocket): void {
    let session: Session | undefined;
    ws.on('message', (raw) => {
      const payload = JSON.parse(raw.toString()) as { op: number; d: Record<string, unknown> };
      if (payload.op === 1) ws.send(JSON.stringify({ op: 11 }));
      if (payload.op === 2) session = this.identify(ws, payload.d);
      if (payload.op === 6) session = this.resume(ws, payload.d);
    });
    ws.on('close', (code) => {
      if (!session || session.ws !== ws) return;
      session.ws = undefined;
      if (code === 1000 || code === 1001) session.ended = true;
    });
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
  }

  private identify(ws: WebSocket, d: Record<string, unknown>): Session | undefined {
    const [shard, shardCount] = (d.shard as [number, number] | undefined) ?? [0, 1];
    if (shardCount !== this.shardCount) return void ws.close(4010, 'Invalid shard');
    this.intents.push(d.intents as number);
    this.logins.push({ kind: 'identify', shard, at: Date.now() });
    this.noteDoubled(shard);
    const session: Session = {
      id: `session-${++this.nextSession}`,
      shard,
      shardCount,
      events: [],
      ws,
      ended: false,
    };
    // Discord's new session on a shard leaves the old one to run out; none gets events again.
    for (const old of this.sessions) if (old.shard === shard && !old.ws) old.ended = true;
    this.sessions.push(session);
    void this.identified.then(() =>
      this.send(session, 'READY', {
        v: 10,
        user: {
          id: this.identity.botId,
          username: 'spool',
          discriminator: '0',
          bot: true,
          avatar: null,
          global_name: null,
        },
        guilds: [],
        session_id: session.id,
        resume_gateway_url: this.identity.url(),
        application: { id: this.identity.appId, flags: 0 },
        shard: [shard, shardCount],
      }),
    );
    return session;
  }

  private resume(ws: WebSocket, d: Record<string, unknown>): Session | undefined {
    const session = this.sessions.find((s) => s.id === d.session_id);
    const resumable = this.resumable && session && !session.ended && !session.ws;
    this.logins.push({
      kind: 'resume',
      shard: session?.shard ?? -1,
      at: Date.now(),
      resumed: Boolean(resumable),
    });
    if (!resumable) {
      ws.send(JSON.stringify({ op: 9, d: false }));
      return undefined;
    }
    this.noteDoubled(session.shard);
    session.ws = ws;
    for (const e of session.events.filter((e) => e.s > Number(d.seq)))
      ws.send(JSON.stringify({ op: 0, ...e }));
    this.send(session, 'RESUMED', {});
    return session;
  }

  private noteDoubled(shard: number): void {
    if (this.sessions.some((s) => s.shard === shard && s.ws)) this.doubled.push(shard);
  }

  private send(session: Session, t: string, d: unknown): void {
    const event = { s: ++this.sequence, t, d };
    session.events.push(event);
    session.ws?.send(JSON.stringify({ op: 0, ...event }));
  }
}
