import type pg from 'pg';
import type { Prisma } from './generated/client.ts';
import { errorMessage } from '../core/errors.ts';
import { StoreUnavailableError } from '../core/ports/store.ts';

/** More distinct statements than the code writes: past this, a text is sent unnamed. */
const MOST_NAMED = 500;
const names = new Map<string, string>();

/**
 * The statement's name on every connection: pg prepares it once per connection, and PostgreSQL
 * then neither parses it again nor, after a few runs, plans it again (planning the delivery path's
 * statements took PostgreSQL more time than running them). Per process, one per text.
 */
function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MOST_NAMED)
    names.set(text, (name = `spool_${names.size}`));
  return name;
}

/**
 * Runs a statement written with `Prisma.sql` on the pg pool under Prisma's adapter, without
 * Prisma's per-statement work: for statements with large parameters (tool results, their index
 * pieces: Prisma's driver adapter logs every query with its parameters into @prisma/debug's
 * history of the last 100 debug calls, kept even with debugging off, so each 2 MB parameter sent
 * through `$executeRaw` stayed alive for about a hundred statements after it), and for the
 * delivery path's many small ones. The statement is the same one, atomic on its own. Values come
 * back as pg gives them: int8 as strings.
 */
export async function queryOnPool<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: pg.Pool,
  statement: Prisma.Sql,
): Promise<pg.QueryResult<R>> {
  // Connecting first tells a database that cannot be reached (nothing was sent: the statement can
  // be sent again as it is) from a statement that failed.
  const client = await pool.connect().catch((error: unknown) => {
    throw new StoreUnavailableError(`the database could not be reached: ${errorMessage(error)}`, {
      cause: error,
    });
  });
  // The pool listens for errors only on idle clients: a connection lost while this one is out
  // would be an unhandled 'error' event, and end the process. The query rejects with it anyway.
  const lost = () => {};
  client.on('error', lost);
  try {
    const { text, values } = statement;
    const name = nameOf(text);
    const result = await client.query<R>(name ? { name, text, values } : { text, values });
    client.release();
    return result;
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  } finally {
    client.off('error', lost);
  }
}

/** The rows of `queryOnPool`. */
export async function runOnPool<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: pg.Pool,
  statement: Prisma.Sql,
): Promise<R[]> {
  return (await queryOnPool<R>(pool, statement)).rows;
}
