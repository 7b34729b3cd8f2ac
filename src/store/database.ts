import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from '../core/logger.ts';
import { PrismaClient } from './generated/client.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.ts';
import { applyMigrations } from './migrate.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
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
  /** How long a connection may take to be ready, and a statement to finish (defaults 10 s, 60 s). */
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
}

export function describeUrl(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `PostgreSQL at ${hostname}${port ? `:${port}` : ''}${pathname}`;
}

async function startLockedEmbeddedPostgres(dataDir: string): Promise<EmbeddedServer> {
  const unlock = await lockDataDir(dataDir);
  try {
    const server = await startEmbeddedPostgres(dataDir);
    return {
      url: server.url,
      async stop() {
        await server.stop();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const embedded = options.databaseUrl ? undefined : await startLockedEmbeddedPostgres(options.dataDir);
  const url = options.databaseUrl ?? embedded!.url;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  // A server that accepts connections but never answers would otherwise hang startup (and every turn) for good.
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? 60_000,
  });
  pool.on('error', (error) => options.logger.error('Database connection error', { error: error.message }));
  const description = embedded ? `embedded PostgreSQL in ${join(options.dataDir, 'postgres')}` : describeUrl(url);
  try {
    const client = await pool.connect().catch((error: Error) => {
      throw new Error(`${description} is not answering (${error.message}; waited up to ${connectTimeoutMs / 1000} s): is it up, and is DATABASE_URL right?`);
    });
    try {
      // A migration may rebuild an index over a big table: it gets all the time it needs.
      await client.query('SET statement_timeout = 0');
      const report = await applyMigrations(client, MIGRATIONS_DIR);
      await client.query('RESET statement_timeout');
      for (const name of report.applied) options.logger.info(`Applied migration ${name}`);
      for (const name of report.modified) options.logger.warn(`Migration ${name} was edited after it was applied`);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end();
    await embedded?.stop();
    throw error;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    description,
    embedded: Boolean(embedded),
    async close() {
      await prisma.$disconnect();
      await pool.end();
      await embedded?.stop();
    },
  };
}
