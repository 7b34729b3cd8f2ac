// The web pages' wiring (docs/web-pages.md): their address, the local key's line on the console,
// the links replies carry to whole results, and the pages over the running bot.
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import type { DeliveryEngine, DeliveryOptions } from './core/delivery/engine/engine.ts';
import type { Logger } from './core/logger.ts';
import type { ChannelAccess } from './core/ports/platform/channel-access.ts';
import type { PlatformSignIn } from './core/ports/platform/platform-sign-in.ts';
import type { HttpEndpoint, Readiness } from './observability.ts';
import type { Database } from './store/database.ts';
import type { HistorySearch } from './store/transcripts/history-search.ts';
import type { McpToolSource } from './tools/mcp/source.ts';
import { openWebPages, pagesBase, resultPage } from './web/open.ts';

/**
 * On the console, the web pages' local address with its one-time key (docs/web-pages.md), a line of
 * the log like any other (one JSON object with LOG_FORMAT=json). The key signs in once, from here.
 */
export function printLocalAddress(
  web: ReturnType<typeof openWeb>,
  config: Config,
  endpoint: HttpEndpoint | undefined,
  logger: Logger,
) {
  const pagesAt = pagesAddress(config, endpoint, []);
  if (web && pagesAt) logger.info(`Web pages: ${web.localKey.address(pagesAt)}`);
}

/**
 * The web pages' address: PUBLIC_URL; on the console (no platform), the local pages'. None with the
 * pages off, or on a platform without PUBLIC_URL.
 */
function pagesAddress(
  config: Config,
  endpoint: HttpEndpoint | undefined,
  platformNames: string[],
): string | undefined {
  if (!config.web.enabled) return undefined;
  if (platformNames.length > 0) return config.web.publicUrl;
  const port = (endpoint?.server.address() as AddressInfo | null)?.port;
  return port ? pagesBase(config.web, port) : undefined;
}

/** Replies link the whole results their turn previewed to the pages, where they have an address. */
export function resultPages(
  config: Config,
  endpoint: HttpEndpoint | undefined,
  platformNames: string[],
): Pick<DeliveryOptions, 'resultPage'> {
  const pagesAt = pagesAddress(config, endpoint, platformNames);
  return pagesAt ? { resultPage: resultPage(pagesAt) } : {};
}

/** The web pages over the database and the running bot (docs/web-pages.md); none when turned off. */
export function openWeb(
  config: Config,
  db: Database,
  bot: {
    platforms: Record<string, PlatformSignIn | 'local'>;
    access: Map<string, ChannelAccess>;
    search: HistorySearch;
    logger: Logger;
    delivery: DeliveryEngine;
    holder: string;
    readiness: Readiness;
    mcpSource: McpToolSource | undefined;
  },
) {
  const { policy } = config.delivery;
  return openWebPages(config.web, db, {
    signIns: bot.platforms,
    access: bot.access,
    admins: policy?.admins ?? [],
    search: bot.search,
    logger: bot.logger,
    operators: {
      ...(policy ? { policy } : {}),
      cancelSchedule: (who, id) => bot.delivery.cancelSchedule(who, id),
      replica: bot.holder,
      notReady: () => bot.readiness.notReady(),
      mcpServers: () => bot.mcpSource?.servers() ?? [],
      now: () => new Date(),
    },
  });
}
