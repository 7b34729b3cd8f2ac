import { join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from '../core/logger.ts';
import { PrismaClient } from './generated/client.ts';
import { embeddedUrl, type EmbeddedServer } from './embedded-postgres.ts';
import { startLockedEmbeddedPostgres, takeEmbeddedStart } from './embedded-start.ts';
import { applyMigrations, MIGRATIONS_DIR } from './migrate.ts';

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  /**
   * For the inbox's acknowledgements alone, on connections of their own: an ack never queues behind
   * turns' writes.
   */
  ackPrisma: PrismaClient;
  /**
   * For the lease heartbeat alone, one connection of its own: a live holder's renewal never waits
   * behind its turns' statements. Behind them, after a stall or under load, its leases ran out
   * while it still worked their lanes, and another replica took them over and did that work again.
   */
  leasePool: pg.Pool;
  /** Where the data lives, without credentials: fit for logs. */
  description: string;
  /** The embedded database: no other process can reach it. */
  embedded: boolean;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A PostgreSQL server; when absent, an embedded PostgreSQL server under `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  logger: Logger;
  /** Connections to keep (default 10). */
  poolSize?: number;
  /**
   * How long a connection may take to be ready, and a statement to finish (defaults 10 s, 60 s).
   */
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** The embedded server stopped and could not be started again: the bot cannot go on. */
  onLost?(reason: string): void;
}

/** Connections kept for acknowledgements: one statement each, so a few serve any burst. */
const ACK_CONNECTIONS = 2;

/** How often the embedded server is checked, and how many failed restarts in a row it gets. */
const KEEPER_MS = 2_000;
const KEEPER_TRIES = 15;

/**
 * The embedded server is the bot's to keep: killed or crashed under it, it is started again.
 * When that keeps failing (30 s), `onLost` says why, so that a supervisor restarts the bot.
 */
function keepRunning(
  server: EmbeddedServer,
  logger: Logger,
  onLost: (reason: string) => void,
): () => void {
  let checking = false;
  let failures = 0;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void (async () => {
      if (await server.running()) return void (failures = 0);
      await server.restart();
      failures = 0;
      logger.warn('The embedded PostgreSQL server had stopped; it was started again');
    })()
      .catch((error: Error) => {
        if (++failures === KEEPER_TRIES)
          onLost(
            `the embedded PostgreSQL server stopped and could not be started again: ${error.message}`,
          );
      })
      .finally(() => (checking = false));
  }, KEEPER_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export function describeUrl(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `PostgreSQL at ${hostname}${port ? `:${port}` : ''}${pathname}`;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const url = options.databaseUrl ?? embeddedUrl(options.dataDir);
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  // A server that accepts connections but never answers would otherwise hang startup (and every
  // turn) for good.
  const poolOf = (max: number) => {
    const pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: connectTimeoutMs,
      statement_timeout: options.statementTimeoutMs ?? 60_000,
    });
    pool.on('error', (error) =>
      options.logger.error('Database connection error', { error: error.message }),
    );
    return pool;
  };
  const pool = poolOf(options.poolSize ?? 10);
  const ackPool = poolOf(ACK_CONNECTIONS);
  const leasePool = poolOf(1);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const ackPrisma = new PrismaClient({ adapter: new PrismaPg(ackPool) });
  // Prisma's query compiler (WebAssembly) takes a good part of a start to load and needs no
  // server: it loads while the server starts and the migrations are checked.
  const compilersLoaded = Promise.all([prisma.$connect(), ackPrisma.$connect()]);
  const description = options.databaseUrl
    ? describeUrl(url)
    : `embedded PostgreSQL in ${join(options.dataDir, 'postgres')}`;
  let embedded: EmbeddedServer | undefined;
  try {
    // Begun by the entry before the modules loaded, or now.
    if (!options.databaseUrl)
      embedded = await (takeEmbeddedStart(options.dataDir) ??
        startLockedEmbeddedPostgres(options.dataDir));
    await migrate(pool, description, connectTimeoutMs, options.logger);
    await compilersLoaded;
  } catch (error) {
    await Promise.allSettled([compilersLoaded]);
    await Promise.all([prisma.$disconnect(), ackPrisma.$disconnect()]);
    await Promise.all([pool.end(), ackPool.end(), leasePool.end()]);
    await embedded?.stop();
    throw error;
  }
  const stopKeeping = embedded
    ? keepRunning(
        embedded,
        options.logger,
        options.onLost ?? ((reason) => options.logger.error(reason)),
      )
    : () => {};
  return {
    prisma,
    pool,
    ackPrisma,
    leasePool,
    description,
    embedded: Boolean(embedded),
    async close() {
      stopKeeping();
      await Promise.all([prisma.$disconnect(), ackPrisma.$disconnect()]);
      await Promise.all([pool.end(), ackPool.end(), leasePool.end()]);
      await embedded?.stop();
    },
  };
}

/** Applies the pending migrations on a connection of `pool`, logging what it did. */
async function migrate(
  pool: pg.Pool,
  description: string,
  connectTimeoutMs: number,
  logger: Logger,
): Promise<void> {
  const client = await pool.connect().catch((error: Error) => {
    throw new Error(
      `${description} is not answering (${error.message}; waited up to ${connectTimeoutMs / 1000} s): is it up, and is DATABASE_URL right?`,
    );
  });
  try {
    // A migration may rebuild an index over a big table: it gets all the time it needs.
    await client.query('SET statement_timeout = 0');
    const report = await applyMigrations(client, MIGRATIONS_DIR);
    await client.query('RESET statement_timeout');
    for (const name of report.applied) logger.info(`Applied migration ${name}`);
    for (const name of report.modified)
      logger.warn(`Migration ${name} was edited after it was applied`);
  } finally {
    client.release();
  }
}
