import type { AnswerRating, FeedbackPort, FeedbackTally } from '../../core/ports/feedback.ts';
import type { PrismaClient } from '../generated/client.ts';

/** People's ratings of answers, in PostgreSQL: one row per person per answer. */
export class FeedbackLedger implements FeedbackPort {
  constructor(private readonly prisma: PrismaClient) {}

  async rate({
    scope,
    inboxId,
    user,
    rating,
    reason,
  }: AnswerRating): Promise<'recorded' | 'unknown'> {
    // One statement: two clicks at once on two replicas make one row, the later one's. A reason
    // comes with its thumbs-down or after it; a change of mind drops the old one.
    const rows = await this.prisma.$queryRaw<Array<{ id: bigint }>>`
      INSERT INTO answer_feedback (inbox_id, platform, workspace, channel, asked_by, user_id, rating, reason)
      SELECT i.id, l.platform, l.workspace, l.channel, i.user_id, ${user}, ${rating}, ${reason ?? null}
        FROM inbox i JOIN lanes l ON l.id = i.lane_id
       WHERE i.id = ${BigInt(inboxId)} AND l.platform = ${scope.platform} AND l.workspace = ${scope.workspace}
         AND l.channel = ${scope.channel}
      ON CONFLICT (inbox_id, user_id) DO UPDATE
         SET rating = EXCLUDED.rating, updated_at = now(),
             reason = coalesce(EXCLUDED.reason, CASE WHEN answer_feedback.rating = EXCLUDED.rating THEN answer_feedback.reason END)
      RETURNING id`;
    return rows.length > 0 ? 'recorded' : 'unknown';
  }

  async tally(query: {
    platform: string;
    workspace: string;
    since: Date;
    askedBy?: string;
  }): Promise<FeedbackTally> {
    const askedBy = query.askedBy ?? null;
    const [row] = await this.prisma.$queryRaw<Array<{ up: number; down: number }>>`
      SELECT count(*) FILTER (WHERE rating = 'up')::int AS up, count(*) FILTER (WHERE rating = 'down')::int AS down
        FROM answer_feedback
       WHERE platform = ${query.platform} AND workspace = ${query.workspace} AND updated_at >= ${query.since}
         AND (${askedBy}::text IS NULL OR asked_by = ${askedBy})`;
    return { up: row?.up ?? 0, down: row?.down ?? 0 };
  }
}
