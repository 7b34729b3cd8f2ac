import type pg from 'pg';
import type { Prisma } from './generated/client.ts';

/**
 * Runs a statement written with `Prisma.sql` on the pg pool under Prisma's adapter, for statements
 * with large parameters (tool results, their index pieces). Prisma's driver adapter logs every
 * query with its parameters into @prisma/debug's history of the last 100 debug calls, kept even
 * with debugging off: each 2 MB parameter sent through `$executeRaw` stayed alive for about a
 * hundred statements after it. The statement is the same one, atomic on its own.
 */
export async function runOnPool(pool: pg.Pool, statement: Prisma.Sql): Promise<void> {
  await pool.query(statement.text, statement.values);
}
