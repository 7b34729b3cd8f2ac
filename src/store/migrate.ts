import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { errorMessage } from '../core/errors.ts';

/** Prisma Migrate's advisory lock key, so our runner and Prisma's CLI exclude each other too. */
const PRISMA_MIGRATE_LOCK = 72707369;

// The table exactly as Prisma Migrate creates it, so `prisma migrate status` agrees with us.
const MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export interface MigrationReport {
  applied: string[];
  /** Applied earlier but edited since; Prisma's CLI warns about these too. */
  modified: string[];
}

/**
 * Applies pending migrations in order, each in its own transaction together with its
 * `_prisma_migrations` row. A session advisory lock makes concurrent starters wait their turn.
 */
export async function applyMigrations(
  client: pg.ClientBase,
  dir: string,
): Promise<MigrationReport> {
  const migrations = await readMigrations(dir);
  await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
  try {
    await client.query(MIGRATIONS_TABLE);
    const { rows } = await client.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
    }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const known = new Map(rows.map((r) => [r.migration_name, r]));
    const report: MigrationReport = { applied: [], modified: [] };
    for (const migration of migrations) {
      const row = known.get(migration.name);
      if (row && !row.finished_at) {
        throw new MigrationError(
          `Migration ${migration.name} failed earlier and was not resolved. Fix the database, then mark it rolled back ` +
            `(UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '${migration.name}').`,
        );
      }
      if (row) {
        if (row.checksum !== migration.checksum) report.modified.push(migration.name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new MigrationError(`Migration ${migration.name} failed: ${errorMessage(error)}`);
      }
      report.applied.push(migration.name);
    }
    return report;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]);
  }
}
