import type pg from 'pg';
import type { Prisma } from './generated/client.ts';

/**
 * Runs a statement written with `Prisma.sql` on the pg pool under Prisma's adapter, for statements
 * with large parameters (tool results, their index pieces). Prisma's driver adapter logs every
 * query with its parameters into @prisma/debug's history of the last 100 debug calls, kept even
 * with debugging off: each 2 MB parameter sent through `$executeRaw` stayed alive for about a
 * hundred statements after it. The statement is the same one, atomic on its own.
 */
export async function runOnPool<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: pg.Pool,
  statement: Prisma.Sql,
): Promise<R[]> {
  return (await pool.query<R>(statement.text, statement.values)).rows;
}
