import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { errorMessage } from '../core/errors.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

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

type AppliedRow = { migration_name: string; checksum: string; finished_at: Date | null };

const APPLIED =
  'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL';

/** PostgreSQL's undefined_table: a database never migrated has no `_prisma_migrations`. */
const UNDEFINED_TABLE = '42P01';

/**
 * Applies pending migrations in order, each in its own transaction together with its
 * `_prisma_migrations` row. A session advisory lock makes concurrent starters wait their turn.
 * When none is pending, as at most starts, it takes one statement and no lock.
 */
export async function applyMigrations(
  client: pg.ClientBase,
  dir: string,
): Promise<MigrationReport> {
  const migrations = await readMigrations(dir);
  const applied = await client.query<AppliedRow>(APPLIED).then(
    ({ rows }) => rows,
    (error: { code?: string }) => {
      if (error.code === UNDEFINED_TABLE) return [];
      throw error;
    },
  );
  const report = reportOf(migrations, applied);
  if (report.pending.length === 0) return { applied: [], modified: report.modified };
  await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
  try {
    await client.query(MIGRATIONS_TABLE);
    // Read again under the lock: another starter may have applied some meanwhile.
    const { rows } = await client.query<AppliedRow>(APPLIED);
    const { pending, modified } = reportOf(migrations, rows);
    const done: MigrationReport = { applied: [], modified };
    for (const migration of pending) {
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
      done.applied.push(migration.name);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]);
  }
}

/**
 * The migrations not applied yet and those edited since they were; a migration that failed
 * earlier and was not resolved stops it.
 */
function reportOf(
  migrations: Migration[],
  rows: AppliedRow[],
): { pending: Migration[]; modified: string[] } {
  const known = new Map(rows.map((r) => [r.migration_name, r]));
  const pending: Migration[] = [];
  const modified: string[] = [];
  for (const migration of migrations) {
    const row = known.get(migration.name);
    if (row && !row.finished_at) {
      throw new MigrationError(
        `Migration ${migration.name} failed earlier and was not resolved. Fix the database, then mark it rolled back ` +
          `(UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '${migration.name}').`,
      );
    }
    if (!row) pending.push(migration);
    else if (row.checksum !== migration.checksum) modified.push(migration.name);
  }
  return { pending, modified };
}
