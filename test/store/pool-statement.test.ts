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
  it('is prepared once on a connection and run again from there, whatever its values', async () => {
    const one = new pg.Pool({ connectionString: server.url, max: 1 });
    try {
      const lookup = (n: number) => Prisma.sql`SELECT ${n}::int + 1 AS next FROM pg_class LIMIT 1`;
      for (let n = 0; n < 7; n++)
        expect(await runOnPool(one, lookup(n))).toEqual([{ next: n + 1 }]);
      // The same connection's prepared statements: this one, planned for each of its 7 runs.
      const { rows } = await one.query<{ statement: string; runs: number }>(
        'SELECT statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements',
      );
      expect(rows).toEqual([{ statement: lookup(0).text, runs: 7 }]);
    } finally {
      await one.end();
    }
  });

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
    // The pool's idle connection (the probe's) is gone once its socket's end is heard; until then
    // the pool may lend it, and a statement sent on it is one that may have been sent. After, a
    // statement needs a new connection, which the stopped server refuses: nothing was sent.
    await until(() => pool.idleCount === 0);
    expect(await settled(Prisma.sql`SELECT 1`)).toMatchObject({
      error: expect.any(StoreUnavailableError),
    });
    await server.start();
    expect(await runOnPool(pool, Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  });
});
