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
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.logger.error('Database connection error', { error: error.message }));
  const description = embedded ? `embedded PostgreSQL in ${join(options.dataDir, 'postgres')}` : describeUrl(url);
  try {
    const client = await pool.connect();
    try {
      const report = await applyMigrations(client, MIGRATIONS_DIR);
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
