import type { AddressInfo } from 'node:net';
import { DiscordAdapter } from '../../src/adapters/discord/discord-adapter.ts';
import { INTERACTIONS_PATH } from '../../src/adapters/discord/interactions/http-interactions.ts';
import type { DiscordAdapterConfig } from '../../src/adapters/discord/parts.ts';
import type { Logger } from '../../src/core/logger.ts';
import type { DeliveryEngine } from '../../src/core/delivery/engine/engine.ts';
import type { Tool } from '../../src/core/ports/tools.ts';
import { serveRoutes } from '../../src/observability.ts';
import type { Database } from '../../src/store/database.ts';
import { testAgent } from './agent.ts';
import { testDatabase, testEngine, testStore } from './db.ts';
import { APP_ID, FakeDiscord } from './fake-discord.ts';
import { FakeOpenAi } from './fake-openai.ts';
import { silentLogger } from './logger.ts';

/** The guild the test adapters register their commands to. */
export const GUILD = '400000000000000001';

/** An in-process Discord adapter, and with a public key its HTTP interactions endpoint. */
export interface StartedDiscordAdapter {
  adapter: DiscordAdapter;
  /** Where Discord would POST interactions: only with `publicKey`. */
  interactionsUrl?: string;
  /** Stops the adapter and the engine, and closes the interactions endpoint. */
  stop(): Promise<void>;
}

/**
 * A DiscordAdapter over `engine`, against the fake at `config.apiUrl` (token "bot-token", the
 * fake's application, commands in GUILD, unless `config` says otherwise); with `publicKey`, its
 * interactions endpoint served as `npm start` mounts it. The engine is started once the adapter is.
 */
export async function startDiscordAdapter(
  engine: DeliveryEngine,
  config: Partial<DiscordAdapterConfig> & { apiUrl: string },
  logger: Logger = silentLogger,
): Promise<StartedDiscordAdapter> {
  const adapter = new DiscordAdapter(
    { token: 'bot-token', applicationId: APP_ID, guildId: GUILD, ...config },
    engine,
    logger,
  );
  await adapter.start();
  engine.start();
  const endpoint = config.publicKey ? await serveRoutes(0, []) : undefined;
  endpoint?.mount(adapter.httpHandler()!, adapter.httpPath);
  const port = (endpoint?.server.address() as AddressInfo | undefined)?.port;
  return {
    adapter,
    interactionsUrl: port ? `http://127.0.0.1:${port}${INTERACTIONS_PATH}` : undefined,
    stop: async () => {
      endpoint?.server.close();
      await Promise.all([adapter.stop(), engine.stop(0)]);
    },
  };
}

/**
 * A whole Spool on Discord in this process: the test database, the fake model (with `tools`), the
 * fake Discord (gateway and REST), the delivery engine (`engine` options, `deps` made over the
 * database) and its adapter (`adapter` settings), as in {@link startDiscordAdapter}. `close` stops
 * all of them.
 */
export interface DiscordSpool extends StartedDiscordAdapter {
  db: Database;
  llm: FakeOpenAi;
  discord: FakeDiscord;
  engine: DeliveryEngine;
  close(): Promise<void>;
}

export async function startDiscordSpool(
  options: {
    tools?: Tool[];
    engine?: Parameters<typeof testEngine>[2];
    deps?: (db: Database) => Parameters<typeof testEngine>[3];
    adapter?: Partial<DiscordAdapterConfig>;
  } = {},
): Promise<DiscordSpool> {
  const db = await testDatabase();
  const [llm, discord] = await Promise.all([new FakeOpenAi().start(), new FakeDiscord().start()]);
  const engine = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db), tools: options.tools ?? [] }),
    options.engine,
    options.deps?.(db),
  );
  const started = await startDiscordAdapter(engine, {
    apiUrl: discord.apiUrl,
    ...options.adapter,
  });
  return {
    ...started,
    db,
    llm,
    discord,
    engine,
    close: async () => {
      await started.stop();
      await Promise.all([discord.stop(), llm.stop()]);
      await db.close();
    },
  };
}
