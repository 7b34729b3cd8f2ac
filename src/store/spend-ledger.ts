import type pg from 'pg';
import type {
  Admission,
  CapScope,
  Hold,
  Spender,
  SpendLedger,
  UsageQuery,
  UsageRow,
} from '../core/ports/spend.ts';

/** Names one scope's lock: every replica admitting a request against it takes the same. */
const lockName = (s: CapScope) =>
  ['spend', s.platform, s.workspace, s.channel ?? '*', s.user ?? '*'].join('/');

/** What a scope has spent in its period, and what requests in flight hold against it. */
const SPENT = `
  SELECT (SELECT coalesce(sum(CASE WHEN $6 = 'tokens' THEN total_tokens ELSE coalesce(cost, 0) END), 0)
            FROM llm_usage
           WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR channel = $3)
             AND ($4::text IS NULL OR user_id = $4) AND created_at >= $5)
       + (SELECT coalesce(sum(CASE WHEN $6 = 'tokens' THEN tokens ELSE coalesce(cost, 0) END), 0)
            FROM spend_holds
           WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR channel = $3)
             AND ($4::text IS NULL OR user_id = $4) AND expires_at > now()) AS spent`;

/**
 * Usage and the holds of requests in flight, in PostgreSQL. A request is admitted under the locks
 * of all its scopes (advisory, taken in one order, so two admissions never wait on each other
 * crosswise), so that no two requests both see room that only one of them has: a cap is passed by
 * at most one request's hold.
 */
export class PostgresSpendLedger implements SpendLedger {
  constructor(private readonly pool: pg.Pool) {}

  async admit(
    spender: Spender,
    scopes: CapScope[],
    hold: Hold,
    expiresAt: Date,
  ): Promise<Admission> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const names = [...new Set(scopes.map(lockName))].sort();
      await client.query(
        'SELECT pg_advisory_xact_lock(hashtextextended(name, 0)) FROM unnest($1::text[]) AS name ORDER BY name',
        [names],
      );
      for (const [at, s] of scopes.entries()) {
        const { rows } = await client.query<{ spent: string }>(SPENT, [
          s.platform,
          s.workspace,
          s.channel ?? null,
          s.user ?? null,
          s.since,
          s.unit,
        ]);
        const spent = Number(rows[0]!.spent);
        if (spent >= s.limit) {
          await client.query('ROLLBACK');
          return { admitted: false, at, spent };
        }
      }
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO spend_holds (platform, workspace, channel, user_id, tokens, cost, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [
          spender.platform,
          spender.workspace,
          spender.channel,
          spender.user,
          hold.tokens,
          hold.cost ?? null,
          expiresAt,
        ],
      );
      await client.query('COMMIT');
      return { admitted: true, holdId: String(rows[0]!.id) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async release(holdId: string): Promise<void> {
    await this.pool.query('DELETE FROM spend_holds WHERE id = $1', [holdId]);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { rows } = await this.pool.query<{
      day: string;
      channel: string;
      user_id: string | null;
      tokens: string;
      cost: number;
      unpriced: number;
    }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, channel, user_id,
              sum(total_tokens)::bigint AS tokens, coalesce(sum(cost), 0)::float8 AS cost,
              (count(*) FILTER (WHERE cost IS NULL))::int AS unpriced
         FROM llm_usage
        WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR user_id = $3)
          AND created_at >= $4
        GROUP BY 1, 2, 3`,
      [query.platform, query.workspace, query.user ?? null, query.since],
    );
    return rows.map((r) => ({
      day: r.day,
      channel: r.channel,
      ...(r.user_id === null ? {} : { user: r.user_id }),
      tokens: Number(r.tokens),
      cost: r.cost,
      unpriced: r.unpriced,
    }));
  }
}
