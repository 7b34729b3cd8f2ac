import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/store/embedded-postgres.ts';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/store/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseKind: 'embedded' | 'postgres';
  }
}

export const POSTGRES_ADMIN_URL =
  process.env.SPOOL_TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** One statement's rows, on a connection of its own to the database at `url`. */
export async function queryAt<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database on the PostgreSQL server (or the server `adminUrl` names); the returned
 * function drops it.
 */
export async function createScratchDatabase(
  prefix: string,
  adminUrl = POSTGRES_ADMIN_URL,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** An embedded server in a directory of its own, removed with it. */
export async function startScratchEmbedded(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-embedded-'));
  const server = await startEmbeddedPostgres(dir);
  return {
    url: server.url,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One database for the whole run, migrated once, on a fresh embedded server or on the PostgreSQL
 * server, so runs never see each other's rows; each test file works on a copy of it (see
 * file-database.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const kind = project.config.env.SPOOL_TEST_DB === 'postgres' ? 'postgres' : 'embedded';
  const server = kind === 'embedded' ? await startScratchEmbedded() : undefined;
  // Its own database, not the server's `postgres`: files copy it while others connect to
  // `postgres` to make their copies, and PostgreSQL copies no database anyone is connected to.
  const database = await createScratchDatabase('spool_test', server?.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await applyMigrations(client, MIGRATIONS_DIR);
  await client.end();
  project.provide('databaseKind', kind);
  project.provide('databaseUrl', database.url);
  return async () => {
    await database.drop();
    await server?.stop();
  };
}
