import {
  Client,
  ClientUser,
  Events,
  SimpleShardingStrategy,
  type APIUser,
  type ClientOptions,
  type IIdentifyThrottler,
  type SessionInfo,
} from 'discord.js';
import { errorMessage } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import type { ShardEvent, ShardLease, ShardSession } from '../../../core/ports/platform/gateway.ts';

/**
 * Closing with 1000 or 1001 ends the session at Discord; any other code keeps it resumable. 4200
 * is @discordjs/ws's own "to be resumed".
 */
const HAND_OVER_CODE = 4200;

export interface ShardConnectionDeps {
  token: string;
  /** The client's options (intents, REST, mentions) without its shards. */
  options: ClientOptions;
  /** The bot's own user, read once: a resumed session gets no READY to say who it is. */
  botUser: APIUser;
  /** Attaches what Spool listens for (interactions, mentions) to a shard's client. */
  listen(client: Client): void;
  throttler: IIdentifyThrottler;
  /** The shard's session as its last holder left it, and each new one kept with the lease. */
  loadSession(): Promise<ShardSession | undefined>;
  keepSession(session: ShardSession | undefined): Promise<void>;
  onEvent(event: ShardEvent): void;
  logger: Logger;
}

/** @discordjs/ws's manager, as discord.js hands it to `buildStrategy`. */
type WebSocketManager = Parameters<
  NonNullable<NonNullable<ClientOptions['ws']>['buildStrategy']>
>[0];

/** discord.js makes its user from READY only (the constructor is not in its typings). */
const ClientUserOf = ClientUser as unknown as new (client: Client, data: APIUser) => ClientUser;

const toSession = (info: SessionInfo): ShardSession => ({
  sessionId: info.sessionId,
  sequence: info.sequence,
  resumeUrl: info.resumeURL,
  shardCount: info.shardCount,
});

/**
 * One shard's gateway connection, a discord.js client of its own (`shards: [id]`), held while its
 * lease is. Its session comes from the lease's row, so a taker resumes where the last holder
 * stopped (Discord replays what was missed); a new one is kept there as soon as READY names it, and
 * its sequence with each renewal of the lease (a taker replays from at most one renewal back:
 * every event is recorded once by its key, so a replay is never answered twice).
 */
export class ShardConnection {
  readonly client: Client;
  private session?: SessionInfo;
  /** The session is being handed over: @discordjs/ws's clearing of it is not kept. */
  private handingOver = false;
  private manager?: WebSocketManager;
  /** Settles `open` when the connection is closed before it was ready. */
  private closed?: () => void;

  constructor(
    readonly lease: ShardLease,
    readonly shardCount: number,
    private readonly deps: ShardConnectionDeps,
  ) {
    this.client = new Client({
      ...deps.options,
      shards: [lease.shardId],
      shardCount,
      ws: {
        ...deps.options.ws,
        buildIdentifyThrottler: () => deps.throttler,
        buildStrategy: (manager) => this.sessionsFromLease(manager),
      },
    });
    // discord.js learns its user from READY; a resumed session has none.
    (this.client as { user: ClientUser | null }).user = new ClientUserOf(this.client, deps.botUser);
    deps.listen(this.client);
  }

  get shardId(): number {
    return this.lease.shardId;
  }

  /** The sequence reached, to keep with the lease. */
  sequence(): number | undefined {
    return this.session?.sequence;
  }

  /** Connects: resumes the kept session when it is of this shard count, else identifies. */
  async open(): Promise<void> {
    const kept = await this.deps.loadSession();
    if (kept)
      this.session = {
        sessionId: kept.sessionId,
        sequence: kept.sequence,
        resumeURL: kept.resumeUrl,
        shardCount: kept.shardCount,
        shardId: this.shardId,
      };
    const resumable = kept?.shardCount === this.shardCount;
    const ready = new Promise<void>((resolve) => {
      this.client.once(Events.ShardReady, () => {
        if (resumable || this.lease.takenOver) this.gap();
        resolve();
      });
      this.client.once(Events.ShardResume, (_id, replayed) => {
        // discord.js marks a client ready on READY only: a resumed shard is ready all the same,
        // and what it held back (the replayed events) is handled now.
        (this.client.ws as unknown as { checkShardsReady(): void }).checkShardsReady();
        this.deps.onEvent({ kind: 'resume', shardId: this.shardId, replayed });
        resolve();
      });
    });
    const closed = new Promise<void>((resolve) => (this.closed = resolve));
    await this.client.login(this.deps.token);
    await Promise.race([ready, closed]);
  }

  /** Closes the connection, leaving its session resumable for the next holder. */
  async close(): Promise<void> {
    this.handingOver = true;
    this.closed?.();
    try {
      await this.manager?.destroy({ code: HAND_OVER_CODE, reason: 'handed over' });
    } catch (error) {
      this.deps.logger.warn('Discord: a shard did not close cleanly', {
        shard: this.shardId,
        error: errorMessage(error),
      });
    }
    await this.client.destroy();
  }

  /** The shard identified anew where a session was to go on: what it missed is lost. */
  private gap(): void {
    this.deps.logger.warn(
      `Discord: shard ${this.shardId} identified anew; the events Discord sent it since its last session ended are lost`,
      { shard: this.shardId, takenOver: this.lease.takenOver },
    );
    this.deps.onEvent({ kind: 'gap', shardId: this.shardId, takenOver: this.lease.takenOver });
  }

  /**
   * @discordjs/ws asks for and reports the session through its manager's options: here they are
   * the lease's, with discord.js's own kept in step (it reads the session for a RESUMED).
   */
  private sessionsFromLease(manager: WebSocketManager): SimpleShardingStrategy {
    this.manager = manager;
    const own = manager.options.updateSessionInfo.bind(manager.options);
    manager.options.retrieveSessionInfo = (shardId) => {
      void own(shardId, this.session ?? null);
      return this.session ?? null;
    };
    manager.options.updateSessionInfo = async (shardId, info) => {
      await own(shardId, info);
      const renewed = info && info.sessionId !== this.session?.sessionId;
      if (!info && this.handingOver) return;
      this.session = info ?? undefined;
      if (renewed || !info) await this.keep(info);
    };
    return new SimpleShardingStrategy(manager);
  }

  private async keep(info: SessionInfo | null): Promise<void> {
    try {
      await this.deps.keepSession(info ? toSession(info) : undefined);
    } catch (error) {
      // Not kept: the next holder identifies instead of resuming (the gap is reported then).
      this.deps.logger.warn('Discord: a shard session could not be kept', {
        shard: this.shardId,
        error: errorMessage(error),
      });
    }
  }
}
