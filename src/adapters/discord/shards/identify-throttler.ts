import { setTimeout as sleep } from 'node:timers/promises';
import type { IIdentifyThrottler } from 'discord.js';
import type { Logger } from '../../../core/logger.ts';
import type { GatewayPort, ShardEvent } from '../../../core/ports/platform/gateway.ts';

export interface IdentifyBudget {
  app: string;
  /** Discord's `max_concurrency`: shards identify in `shard_id % maxConcurrency` buckets. */
  maxConcurrency: number;
  /** Between two identifies of one bucket, whichever replica makes them (Discord's: 5 s). */
  spacingMs: number;
  /** Identifies of the day's budget never used by a reconnect: kept for a deliberate restart. */
  margin: number;
}

/**
 * discord.js's identify throttler over the database, so the replicas share Discord's limits: each
 * identify takes its bucket once it is free, `spacingMs` after the one before whoever took it (a
 * shard waits it out and asks again), and one of the day's identifies. Past the margin none is
 * taken until the day's count resets: a replica crash-looping waits instead of spending the
 * token's last identifies (Discord resets a token that runs out). A resume takes none.
 */
export function databaseIdentifyThrottler(
  gateway: Pick<GatewayPort, 'identifyTurn'>,
  budget: IdentifyBudget,
  onEvent: (event: ShardEvent) => void,
  logger: Logger,
): IIdentifyThrottler {
  return {
    async waitForIdentify(shardId, signal) {
      const bucket = shardId % budget.maxConcurrency;
      for (;;) {
        signal.throwIfAborted();
        const turn = await gateway.identifyTurn(
          budget.app,
          bucket,
          budget.spacingMs,
          budget.margin,
        );
        if ('identify' in turn) {
          onEvent({ kind: 'identify', shardId });
          return;
        }
        if ('busyMs' in turn) {
          await sleep(turn.busyMs, undefined, { signal });
          continue;
        }
        logger.warn(
          `Discord: shard ${shardId} waits to identify: the day's identifies are down to the margin (${budget.margin})`,
          { shard: shardId, retryAfterMs: Math.round(turn.retryAfterMs) },
        );
        onEvent({ kind: 'kept_back', shardId });
        await sleep(Math.min(turn.retryAfterMs, 60_000) + 1, undefined, { signal });
      }
    },
  };
}
