import type {
  HeldLane,
  HeldSpend,
  OperatorRecordsPort,
  ScheduleRun,
  WorkspaceScope,
} from '../../core/ports/web/operators.ts';
import type { PrismaClient } from '../generated/client.ts';
import { toSchedule } from '../delivery/schedule-ledger.ts';

/** The operator pages' reads (docs/web-pages.md), each of one workspace, keyed by it first. */
export class WebOperatorRecords implements OperatorRecordsPort {
  constructor(private readonly prisma: PrismaClient) {}

  async schedules(scope: WorkspaceScope & { owner?: string }, runs: number) {
    const { platform, workspace, owner } = scope;
    const rows = await this.prisma.schedule.findMany({
      where: { platform, workspace, ...(owner === undefined ? {} : { owner }) },
      orderBy: { id: 'asc' },
    });
    const ids = rows.map((r) => String(r.id));
    // A run is its tick's inbox row, in the schedule's lane or the thread it moved to.
    const found = await this.prisma.$queryRaw<
      Array<{ schedule: string; tick: string; status: string; answered_at: Date | null }>
    >`
      SELECT schedule, tick, status, answered_at FROM (
        SELECT i.delivery->>'schedule' AS schedule, i.delivery->>'tick' AS tick, i.status,
               i.answered_at,
               row_number() OVER (PARTITION BY i.delivery->>'schedule' ORDER BY i.id DESC) AS n
          FROM inbox i JOIN lanes l ON l.id = i.lane_id
         WHERE l.platform = ${platform} AND l.workspace = ${workspace}
           AND i.delivery->>'schedule' = ANY(${ids}::text[])) r
       WHERE n <= ${runs}
       ORDER BY n`;
    const runsOf = (id: string): ScheduleRun[] =>
      found
        .filter((r) => r.schedule === id)
        .map((r) => ({
          tick: new Date(r.tick),
          status: r.status,
          ...(r.answered_at ? { answeredAt: r.answered_at } : {}),
        }));
    return rows.map((row) => ({ schedule: toSchedule(row), runs: runsOf(String(row.id)) }));
  }

  async heldLanes({ platform, workspace }: WorkspaceScope): Promise<HeldLane[]> {
    const rows = await this.prisma.lane.findMany({
      where: { platform, workspace, holder: { not: null }, leaseExpiresAt: { gt: new Date() } },
      orderBy: [{ holder: 'asc' }, { id: 'asc' }],
    });
    return rows.map((r) => ({
      holder: r.holder!,
      channel: r.channel,
      thread: r.thread,
      leaseExpiresAt: r.leaseExpiresAt!,
      generation: String(r.generation),
    }));
  }

  async inbox({ platform, workspace }: WorkspaceScope) {
    const [row] = await this.prisma.$queryRaw<Array<{ pending: number; oldest: Date | null }>>`
      SELECT count(*)::int AS pending, min(i.received_at) AS oldest
        FROM inbox i JOIN lanes l ON l.id = i.lane_id
       WHERE l.platform = ${platform} AND l.workspace = ${workspace} AND i.status = 'pending'`;
    return { pending: row!.pending, ...(row!.oldest ? { oldest: row!.oldest } : {}) };
  }

  async holds(scope: WorkspaceScope & { user?: string }): Promise<HeldSpend[]> {
    const { platform, workspace, user } = scope;
    const rows = await this.prisma.spendHold.findMany({
      where: {
        platform,
        workspace,
        ...(user === undefined ? {} : { userId: user }),
        expiresAt: { gt: new Date() },
      },
      orderBy: { id: 'asc' },
    });
    return rows.map((r) => ({
      channel: r.channel,
      user: r.userId,
      tokens: r.tokens,
      ...(r.cost === null ? {} : { cost: Number(r.cost) }),
      expiresAt: r.expiresAt,
    }));
  }
}
