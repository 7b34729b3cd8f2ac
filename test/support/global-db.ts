import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS_DIR, startEmbeddedPostgres } from '../../src/store/database.ts';
import { applyMigrations } from '../../src/store/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseKind: 'pglite' | 'postgres';
  }
}

export const POSTGRES_ADMIN_URL = process.env.SPOOL_TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** Creates an empty database on the PostgreSQL server; the returned function drops it. */
export async function createScratchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * One database for the whole run, shared by every test file: PGlite takes seconds to start,
 * and a fresh PostgreSQL database keeps runs from seeing each other's rows.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const kind = project.config.env.SPOOL_TEST_DB === 'postgres' ? 'postgres' : 'pglite';
  const database = kind === 'postgres' ? await createScratchDatabase('spool_test') : await startEmbeddedPostgres(undefined, 64);
  // Migrated here, once: test files share PGlite's single session, where an advisory lock
  // cannot keep two migrators apart.
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await applyMigrations(client, MIGRATIONS_DIR);
  await client.end();
  project.provide('databaseKind', kind);
  project.provide('databaseUrl', database.url);
  return 'drop' in database ? database.drop : database.stop;
}
