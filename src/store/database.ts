import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Logger } from '../core/logger.ts';
import { PrismaClient } from './generated/client.ts';
import { lockDataDir } from './data-dir-lock.ts';
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
  /** A PostgreSQL server; when absent, an embedded PGlite database under `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  logger: Logger;
  /** Connections to keep; 1 for PGlite, whose connections share one session. */
  poolSize?: number;
}

export function describeUrl(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `PostgreSQL at ${hostname}${port ? `:${port}` : ''}${pathname}`;
}

interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * PGlite speaking the Postgres wire protocol on an ephemeral loopback port, so the one pg-based
 * code path serves both databases. PGlite has a single session shared by every connection.
 */
export async function startEmbeddedPostgres(dataDir: string | undefined, maxConnections = 1): Promise<EmbeddedServer> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  // Loaded only when used: a bot on an external PostgreSQL never pays for PGlite's import.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

async function startLockedEmbeddedPostgres(dataDir: string): Promise<EmbeddedServer> {
  const unlock = await lockDataDir(dataDir);
  try {
    const server = await startEmbeddedPostgres(join(dataDir, 'pglite'));
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
  // One connection for PGlite: its connections share a session, so two would interleave transactions.
  const pool = new pg.Pool({ connectionString: url, max: embedded ? 1 : (options.poolSize ?? 10) });
  pool.on('error', (error) => options.logger.error('Database connection error', { error: error.message }));
  const description = embedded ? `embedded PGlite in ${join(options.dataDir, 'pglite')}` : describeUrl(url);
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
