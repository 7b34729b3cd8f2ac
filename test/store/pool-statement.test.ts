import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/store/generated/client.ts';
import { runOnPool } from '../../src/store/pool-statement.ts';
import { StoreUnavailableError } from '../../src/core/ports/store.ts';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';
import { until } from '../support/process.ts';

let server: OwnPostgres;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startOwnPostgres();
  pool = new pg.Pool({ connectionString: server.url, connectionTimeoutMillis: 2_000 });
  // As openDatabase's pool does: an idle connection lost is the pool's to report.
  pool.on('error', () => {});
}, 90_000);
afterAll(async () => {
  await pool.end();
  await server.remove();
});

/** What the statement settled with: its rows, or its failure. */
const settled = (statement: Prisma.Sql) =>
  runOnPool(pool, statement).then(
    (rows) => ({ rows }),
    (error: unknown) => ({ error }),
  );

describe('a statement on the pool', () => {
  it('fails, and the process goes on, when the server goes away mid-statement; it says unreachable only when nothing was sent', async () => {
    const running = settled(Prisma.sql`SELECT pg_sleep(30)`);
    await until(async () => {
      const { rows } = await pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND pid <> pg_backend_pid()`,
      );
      return rows.length ? true : undefined;
    });
    // Its connection ends with no word from the server: an 'error' event on a client the pool has
    // lent out, which nothing but the statement's own listener hears (unheard, it ends the process,
    // and this file with it).
    await server.stop('immediate');
    const { error } = (await running) as { error: unknown };
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect(await settled(Prisma.sql`SELECT 1`)).toMatchObject({
      error: expect.any(StoreUnavailableError),
    });
    await server.start();
    expect(await runOnPool(pool, Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  });
});
