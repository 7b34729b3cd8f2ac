import type { InboxEntry } from '../../core/ports/platform/delivery.ts';
import type {
  NewSchedule,
  Schedule,
  SchedulePlace,
  SchedulePort,
} from '../../core/ports/schedules.ts';
import { LeaseLostError, type Lease } from '../../core/ports/store.ts';
import { fence } from '../leases.ts';
import type { PrismaClient, Schedule as ScheduleRow } from '../generated/client.ts';

export const toSchedule = (row: ScheduleRow): Schedule => ({
  id: String(row.id),
  platform: row.platform,
  workspace: row.workspace,
  channel: row.channel,
  owner: row.owner,
  ownerRoles: row.ownerRoles as string[],
  rule: row.rule,
  timeZone: row.timeZone,
  prompt: row.prompt,
  createdAt: row.createdAt,
  ...(row.lastTick ? { lastTick: row.lastTick } : {}),
  ...(row.pausedReason ? { pausedReason: row.pausedReason } : {}),
});

const idOf = (id: string) => (/^\d{1,18}$/.test(id) ? BigInt(id) : undefined);

/** The schedules table, and the move of a tick's inbox row into the thread its header started. */
export class ScheduleLedger implements SchedulePort {
  constructor(private readonly prisma: PrismaClient) {}

  async create(schedule: NewSchedule): Promise<Schedule> {
    return toSchedule(await this.prisma.schedule.create({ data: schedule }));
  }

  async inChannel({ platform, workspace, channel }: SchedulePlace): Promise<Schedule[]> {
    const rows = await this.prisma.schedule.findMany({
      where: { platform, workspace, channel },
      orderBy: { id: 'asc' },
    });
    return rows.map(toSchedule);
  }

  async find(place: Omit<SchedulePlace, 'channel'>, id: string): Promise<Schedule | undefined> {
    const key = idOf(id);
    if (key === undefined) return undefined;
    const { platform, workspace } = place;
    const row = await this.prisma.schedule.findFirst({ where: { platform, workspace, id: key } });
    return row ? toSchedule(row) : undefined;
  }

  async cancel(id: string): Promise<void> {
    await this.prisma.schedule.deleteMany({ where: { id: BigInt(id) } });
  }

  async active(platforms: string[]): Promise<Schedule[]> {
    const rows = await this.prisma.schedule.findMany({
      where: { platform: { in: platforms }, pausedAt: null },
    });
    return rows.map(toSchedule);
  }

  async ticked(id: string, tick: Date): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE schedules SET last_tick = greatest(last_tick, ${tick}) WHERE id = ${BigInt(id)}`;
  }

  async pause(id: string, reason: string): Promise<boolean> {
    const { count } = await this.prisma.schedule.updateMany({
      where: { id: BigInt(id), pausedAt: null },
      data: { pausedAt: new Date(), pausedReason: reason },
    });
    return count > 0;
  }

  async pauseWorkspace(place: { platform: string; workspace: string }, reason: string) {
    const { count } = await this.prisma.schedule.updateMany({
      where: { platform: place.platform, workspace: place.workspace, pausedAt: null },
      data: { pausedAt: new Date(), pausedReason: reason },
    });
    return count;
  }

  async resumeWorkspace(place: { platform: string; workspace: string }, reason: string) {
    const { count } = await this.prisma.schedule.updateMany({
      where: { platform: place.platform, workspace: place.workspace, pausedReason: reason },
      data: { pausedAt: null, pausedReason: null },
    });
    return count;
  }

  async moveToThread(entry: InboxEntry, thread: string, lease: Lease): Promise<string> {
    const { platform, workspace, channel } = entry.lane;
    const delivery = JSON.stringify({ thread, ts: thread });
    // One statement, under the tick's lane lease: the row is in its thread once, or not at all.
    const [row] = await this.prisma.$queryRaw<Array<{ lane_id: bigint }>>`
      WITH lane AS (
        INSERT INTO lanes (platform, workspace, channel, thread) VALUES (${platform}, ${workspace}, ${channel}, ${thread})
        ON CONFLICT (platform, workspace, channel, thread) DO UPDATE SET thread = EXCLUDED.thread
        RETURNING id)
      UPDATE inbox SET lane_id = lane.id, delivery = delivery || ${delivery}::jsonb
        FROM lane WHERE inbox.id = ${BigInt(entry.id)} AND ${fence(lease)}
      RETURNING lane.id AS lane_id`;
    if (!row) throw new LeaseLostError(`lane ${lease.laneId} was taken over before its tick moved`);
    return String(row.lane_id);
  }
}
