import {
  Routes,
  type APIUser,
  type Client,
  type ClientOptions,
  type RESTGetAPIGatewayBotResult,
} from 'discord.js';
import type { Logger } from '../../../core/logger.ts';
import type { GatewayShape, ShardEvent } from '../../../core/ports/platform/gateway.ts';
import type { DiscordSharding } from '../parts.ts';
import { databaseIdentifyThrottler } from './identify-throttler.ts';
import { ShardConnection } from './shard-connection.ts';
import { ShardKeeper } from './shard-keeper.ts';

export interface SharedGatewayDeps {
  app: string;
  token: string;
  /** The adapter's REST client: Discord's count and the bot's user are read through it. */
  rest: Client['rest'];
  /** Each shard's client is made with these (intents, REST, mentions). */
  options: ClientOptions;
  /** Attaches what Spool listens for to a shard's client. */
  listen(client: Client): void;
  logger: Logger;
}

/**
 * The gateway shared with the other replicas: the shard count settled (Discord's, or the
 * setting's), then this replica's share of the shards held, each on a connection of its own.
 */
export async function startSharedGateway(
  sharding: DiscordSharding,
  deps: SharedGatewayDeps,
): Promise<{ keeper: ShardKeeper; gateway: GatewayShape; botUser: APIUser }> {
  const { gateway } = sharding;
  const [info, botUser] = (await Promise.all([
    deps.rest.get(Routes.gatewayBot()),
    deps.rest.get(Routes.user()),
  ])) as [RESTGetAPIGatewayBotResult, APIUser];
  const limit = info.session_start_limit;
  const count = sharding.count === 'auto' ? info.shards : sharding.count;
  const shape = await gateway.settle(deps.app, count, {
    total: limit.total,
    remaining: limit.remaining,
    resetAfterMs: limit.reset_after,
    maxConcurrency: limit.max_concurrency,
  });
  const onEvent = (event: ShardEvent) => sharding.onEvent?.(event);
  const throttler = databaseIdentifyThrottler(
    gateway,
    {
      app: deps.app,
      maxConcurrency: shape.maxConcurrency,
      spacingMs: sharding.identifySpacingMs,
      margin: sharding.identifyMargin,
    },
    onEvent,
    deps.logger,
  );
  const keeper = new ShardKeeper(
    {
      gateway,
      connect: (lease, current) =>
        new ShardConnection(lease, current.shardCount, {
          token: deps.token,
          options: deps.options,
          botUser,
          listen: deps.listen,
          throttler,
          loadSession: () => gateway.session(lease),
          keepSession: (session) => gateway.keepSession(lease, session),
          onEvent,
          logger: deps.logger,
        }),
      onEvent,
      logger: deps.logger,
    },
    { app: deps.app, holder: sharding.holder, leaseMs: sharding.leaseMs },
  );
  await keeper.start();
  return { keeper, gateway: shape, botUser };
}
