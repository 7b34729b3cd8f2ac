import type pg from 'pg';
import type {
  Admission,
  CapScope,
  Hold,
  Spender,
  SpendLedger,
  TurnReserve,
  UsageQuery,
  UsageRow,
} from '../../core/ports/spend.ts';

/** Names one scope's lock: every replica admitting a request against it takes the same. */
const lockName = (s: CapScope) =>
  ['spend', s.platform, s.workspace, s.channel ?? '*', s.user ?? '*'].join('/');

/**
 * What a scope has spent in its period (stored usage), and what requests and turns in flight hold
 * against it, but for one reserve ($7: the asking turn's own).
 */
const COUNTED = `
  SELECT (SELECT coalesce(sum(CASE WHEN $6 = 'tokens' THEN total_tokens ELSE coalesce(cost, 0) END), 0)
            FROM llm_usage
           WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR channel = $3)
             AND ($4::text IS NULL OR user_id = $4) AND created_at >= $5) AS spent,
         (SELECT coalesce(sum(CASE WHEN $6 = 'tokens' THEN tokens ELSE coalesce(cost, 0) END), 0)
            FROM spend_holds
           WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR channel = $3)
             AND ($4::text IS NULL OR user_id = $4) AND expires_at > now()
             AND id IS DISTINCT FROM $7::bigint) AS held`;

const INSERT_HOLD = `
  INSERT INTO spend_holds (platform, workspace, channel, user_id, tokens, cost, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`;

/** A later request's hold comes out of its turn's reserve, which lives on while the turn asks. */
const DRAW = `
  UPDATE spend_holds SET tokens = greatest(0, tokens - $2), cost = cost - least(cost, coalesce($3::numeric, 0)),
         expires_at = $4
   WHERE id = $1`;

/** What a hold counts in a scope's unit (an unpriced model's money as nothing, as in its usage). */
const amountOf = (hold: Hold, unit: CapScope['unit']) =>
  unit === 'tokens' ? hold.tokens : (hold.cost ?? 0);

/**
 * Whether a request passes one scope: what is spent and held must be under the limit; and a
 * turn's first request, while anything else is in flight, must fit the whole turn (`wanted`, its
 * hold and reserve) under it. So under contention a turn is refused before it starts rather than
 * stopped half-way; alone, it starts as any request would.
 */
const passes = (spent: number, held: number, wanted: number, limit: number) =>
  spent + held < limit && (held === 0 || spent + held + wanted <= limit);

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
    turn?: TurnReserve,
  ): Promise<Admission> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const names = [...new Set(scopes.map(lockName))].sort();
      await client.query(
        'SELECT pg_advisory_xact_lock(hashtextextended(name, 0)) FROM unnest($1::text[]) AS name ORDER BY name',
        [names],
      );
      const own = turn && 'reserveId' in turn ? turn.reserveId : null;
      for (const [at, s] of scopes.entries()) {
        const { rows } = await client.query<{ spent: string; held: string }>(COUNTED, [
          s.platform,
          s.workspace,
          s.channel ?? null,
          s.user ?? null,
          s.since,
          s.unit,
          own,
        ]);
        const [spent, held] = [Number(rows[0]!.spent), Number(rows[0]!.held)];
        const wanted =
          turn && 'reserve' in turn ? amountOf(hold, s.unit) + amountOf(turn.reserve, s.unit) : 0;
        if (!passes(spent, held, wanted, s.limit)) {
          await client.query('ROLLBACK');
          return { admitted: false, at, spent, held };
        }
      }
      const place = [spender.platform, spender.workspace, spender.channel, spender.user];
      const insert = async (h: Hold) =>
        String(
          (
            await client.query<{ id: string }>(INSERT_HOLD, [
              ...place,
              h.tokens,
              h.cost ?? null,
              expiresAt,
            ])
          ).rows[0]!.id,
        );
      const holdId = await insert(hold);
      if (own) await client.query(DRAW, [own, hold.tokens, hold.cost ?? null, expiresAt]);
      const reserveId = turn && 'reserve' in turn ? await insert(turn.reserve) : undefined;
      await client.query('COMMIT');
      return { admitted: true, holdId, ...(reserveId ? { reserveId } : {}) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async release(...holdIds: string[]): Promise<void> {
    if (holdIds.length === 0) return;
    await this.pool.query('DELETE FROM spend_holds WHERE id = ANY($1::bigint[])', [holdIds]);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { rows } = await this.pool.query<{
      day: string;
      channel: string;
      user_id: string | null;
      model: string;
      tokens: string;
      cost: number;
      unpriced: number;
    }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, channel, user_id, model,
              sum(total_tokens)::bigint AS tokens, coalesce(sum(cost), 0)::float8 AS cost,
              (count(*) FILTER (WHERE cost IS NULL))::int AS unpriced
         FROM llm_usage
        WHERE platform = $1 AND workspace = $2 AND ($3::text IS NULL OR user_id = $3)
          AND created_at >= $4
        GROUP BY 1, 2, 3, 4`,
      [query.platform, query.workspace, query.user ?? null, query.since],
    );
    return rows.map((r) => ({
      day: r.day,
      channel: r.channel,
      ...(r.user_id === null ? {} : { user: r.user_id }),
      model: r.model,
      tokens: Number(r.tokens),
      cost: r.cost,
      unpriced: r.unpriced,
    }));
  }
}
