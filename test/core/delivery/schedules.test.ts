import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import {
  ChannelGoneError,
  type InboundMessage,
} from '../../../src/core/ports/platform/delivery.ts';
import type { Outbound } from '../../../src/core/ports/platform/platform.ts';
import type { TurnRunner } from '../../../src/core/ports/turns.ts';
import type { Database } from '../../../src/store/database.ts';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { testDatabase, testEngine } from '../../support/db.ts';
import { until } from '../../support/process.ts';

/**
 * Scheduled prompts over the real database, with replicas in one process and a clock the test
 * moves on: each tick is an inbox row keyed by schedule and time, so it runs once whichever
 * replica puts it there, and a stretch of missed ticks runs once, as its latest.
 */

/** What every replica posted, in one log: the platform as a whole. */
interface Platform {
  headers: Array<{ channel: string; text: string; thread: string }>;
  replies: Array<{ thread: string; text: string }>;
  told: Array<{ user: string; text: string }>;
  turns: Array<{ thread: string; text: string; user?: string }>;
}

const newPlatform = (): Platform => ({ headers: [], replies: [], told: [], turns: [] });

function outbound(platform: Platform): Outbound {
  return {
    render: (reply) => [reply],
    startThread: async ({ lane }: InboundMessage, text) => {
      if (lane.channel === 'CGONE') throw new ChannelGoneError('not_in_channel');
      const thread = `thread-${platform.headers.length + 1}`;
      platform.headers.push({ channel: lane.channel, text, thread });
      return thread;
    },
    post: async ({ lane }, chunk) => {
      platform.replies.push({ thread: lane.thread, text: chunk.text });
      return `m-${platform.replies.length}`;
    },
    tell: async ({ user }, text) => void platform.told.push({ user, text }),
    refuse: async () => {},
    showWorking: async () => async () => {},
  };
}

const turns = (platform: Platform): TurnRunner => ({
  runTurn: async (conversation, text, options) => {
    platform.turns.push({ thread: conversation.thread, text, user: options?.user });
    return { reply: `done: ${text}`, status: 'ok' };
  },
});

let db: Database;
const engines: DeliveryEngine[] = [];
/** Each test's own platform: a replica works the schedules of its platforms only. */
let platformName = '';
let tests = 0;

beforeEach(() => {
  platformName = `sched${++tests}`;
});

beforeAll(async () => {
  db = await testDatabase();
});

// Each test's replicas stop with it: they would take on the next test's schedules.
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.stop(1_000)));
});

afterAll(async () => {
  await db?.close();
});

/** Where the platform records direct messages outside any workspace (Discord's `dm`). */
const DIRECT_MESSAGES = 'W-direct';

/** A replica on its own clock, allowing `users` only (everyone without). */
function replica(platform: Platform, clock: () => Date, users?: string[]): DeliveryEngine {
  const engine = testEngine(
    db,
    turns(platform),
    {
      pollMs: 50,
      now: clock,
      scheduleTimeZone: 'Europe/Paris',
      policy: { rules: [], admins: ['UADMIN'] },
    },
    { schedules: new ScheduleLedger(db.prisma) },
  );
  engine.register(platformName, outbound(platform), {
    ...(users && { users }),
    directMessages: DIRECT_MESSAGES,
  });
  engine.start();
  engines.push(engine);
  return engine;
}

const asker = (workspace: string, channel: string, user = 'U1') => ({
  lane: { platform: platformName, workspace, channel, thread: '' },
  user,
});
const minute = 60_000;
const scheduleId = (reply: string | undefined) => /Scheduled #(\d+)/.exec(reply ?? '')?.[1];

describe('scheduled prompts', () => {
  it('two replicas run each tick once: a header starts its thread, and the owner’s turn answers there', async () => {
    const platform = newPlatform();
    let now = new Date('2031-03-03T08:59:30Z');
    // Replica B's clock runs two seconds ahead of A's.
    const a = replica(platform, () => now);
    replica(platform, () => new Date(now.getTime() + 2_000));
    const reply = await a.schedule(asker('W-twice', 'C1'), '"every minute" Check the dashboard');
    expect(reply).toContain('Next run: Mon, 3 Mar 2031, 10:00 CET');
    expect(scheduleId(reply)).toBeDefined();

    for (let tick = 1; tick <= 5; tick++) {
      now = new Date(now.getTime() + minute);
      await until(() => (platform.replies.length === tick ? true : undefined));
    }
    expect(platform.headers.map((h) => h.text)).toEqual(
      Array(5).fill('Scheduled: Check the dashboard'),
    );
    expect(platform.turns).toEqual(
      platform.headers.map(({ thread }) => ({ thread, text: 'Check the dashboard', user: 'U1' })),
    );
    expect(platform.replies).toEqual(
      platform.headers.map(({ thread }) => ({ thread, text: 'done: Check the dashboard' })),
    );
    // Answered once posted: each row is marked just after its reply.
    const keys = async () =>
      (
        await db.pool.query<{ message_key: string; status: string }>(
          `SELECT message_key, status FROM inbox WHERE message_key LIKE $1 ORDER BY id`,
          [`schedule:${scheduleId(reply)}:%`],
        )
      ).rows;
    await expect.poll(keys).toEqual(
      [0, 1, 2, 3, 4].map((i) => ({
        message_key: `schedule:${scheduleId(reply)}:2031-03-03T0${9}:0${i}:00.000Z`,
        status: 'answered',
      })),
    );
  });

  it('runs the ticks missed while every replica was down once, as the latest of them', async () => {
    const platform = newPlatform();
    let now = new Date('2031-03-04T10:00:30Z');
    const first = replica(platform, () => now);
    const id = scheduleId(await first.schedule(asker('W-down', 'C1'), 'every minute Count sheep'));
    now = new Date('2031-03-04T10:01:30Z');
    await until(() => (platform.replies.length === 1 ? true : undefined));
    await first.stop(1_000);

    // Down from 10:01:30 to 10:05:40: the ticks of 10:02 to 10:05 were missed.
    now = new Date('2031-03-04T10:05:40Z');
    replica(platform, () => now);
    await until(() => (platform.replies.length === 2 ? true : undefined));
    now = new Date('2031-03-04T10:06:10Z');
    await until(() => (platform.replies.length === 3 ? true : undefined));
    const keys = await db.pool.query<{ message_key: string }>(
      `SELECT message_key FROM inbox WHERE message_key LIKE $1 ORDER BY id`,
      [`schedule:${id}:%`],
    );
    expect(keys.rows.map((r) => r.message_key.split(':').slice(2).join(':'))).toEqual([
      '2031-03-04T10:01:00.000Z',
      '2031-03-04T10:05:00.000Z',
      '2031-03-04T10:06:00.000Z',
    ]);
    expect(platform.headers).toHaveLength(3);
  });

  it('pauses a schedule whose channel Spool left, tells its owner, and lists it as paused', async () => {
    const platform = newPlatform();
    let now = new Date('2031-03-05T10:00:30Z');
    const engine = replica(platform, () => now);
    const id = scheduleId(
      await engine.schedule(asker('W-gone', 'CGONE'), '"0 * * * *" Hourly report'),
    );
    now = new Date('2031-03-05T11:00:05Z');
    await until(() => (platform.told.length > 0 ? true : undefined));
    expect(platform.told).toEqual([
      {
        user: 'U1',
        text: `Your schedule #${id} ("0 * * * *": Hourly report) is paused: Spool can no longer post in the channel (not_in_channel).`,
      },
    ]);
    const listed = await engine.schedule(asker('W-gone', 'CGONE', 'U2'), 'list');
    expect(listed).toContain(`#${id} by <@U1>: "0 * * * *" (Europe/Paris): Hourly report`);
    expect(listed).toContain('Paused: Spool can no longer post in the channel (not_in_channel).');
    const [row] = (
      await db.pool.query<{ status: string }>(`SELECT status FROM inbox WHERE message_key = $1`, [
        `schedule:${id}:2031-03-05T11:00:00.000Z`,
      ])
    ).rows;
    expect(row?.status).toBe('failed');
    expect(platform.headers).toEqual([]);
    expect(platform.turns).toEqual([]);
  });

  it('pauses a schedule whose owner may no longer use Spool there, and runs nothing of it', async () => {
    const platform = newPlatform();
    let now = new Date('2031-03-06T10:00:30Z');
    const ledger = new ScheduleLedger(db.prisma);
    const gone = await ledger.create({
      platform: platformName,
      workspace: 'W-owner',
      channel: 'C1',
      owner: 'ULEFT',
      ownerRoles: [],
      rule: 'every minute',
      timeZone: 'UTC',
      prompt: 'Left behind',
      createdAt: now,
    });
    const engine = replica(platform, () => now, ['U1']);
    await engine.schedule(asker('W-owner', 'C1'), '"every minute" Still here');
    now = new Date('2031-03-06T10:01:30Z');
    await until(() => (platform.replies.length === 1 ? true : undefined));
    expect(platform.turns.map((t) => t.text)).toEqual(['Still here']);
    expect(platform.told).toEqual([
      {
        user: 'ULEFT',
        text: `Your schedule #${gone.id} ("every minute": Left behind) is paused: its owner may no longer use Spool in this channel.`,
      },
    ]);
    expect(
      (await ledger.find({ platform: platformName, workspace: 'W-owner' }, gone.id))?.pausedReason,
    ).toBe('its owner may no longer use Spool in this channel');
  });

  it('lets the owner or an admin cancel a schedule, and nobody else; refuses a person not allowed', async () => {
    const platform = newPlatform();
    const now = new Date('2031-03-07T10:00:30Z');
    const engine = replica(platform, () => now, ['U1', 'U2', 'UADMIN']);
    const first = scheduleId(
      await engine.schedule(asker('W-cancel', 'C1'), 'every day at 9:00 Standup notes'),
    );
    const second = scheduleId(
      await engine.schedule(asker('W-cancel', 'C1'), '0 9 * * 1-5 Weekday notes'),
    );
    expect(await engine.schedule(asker('W-cancel', 'C1', 'U2'), `cancel ${first}`)).toBe(
      `Only <@U1>, who scheduled #${first}, or an admin may cancel it.`,
    );
    expect(await engine.schedule(asker('W-cancel', 'C1', 'U1'), `cancel ${first}`)).toBe(
      `Cancelled schedule #${first}.`,
    );
    expect(await engine.schedule(asker('W-cancel', 'C1', 'UADMIN'), `cancel #${second}`)).toBe(
      `Cancelled schedule #${second}.`,
    );
    expect(await engine.schedule(asker('W-cancel', 'C1'), 'list')).toBe(
      'No schedules in this channel.',
    );
    expect(await engine.schedule(asker('W-cancel', 'C1'), 'cancel 999999')).toContain(
      'There is no schedule #999999 here',
    );
    expect(await engine.schedule(asker('W-cancel', 'C1', 'UOTHER'), 'list')).toBeUndefined();
    expect(await engine.schedule(asker('W-cancel', 'C1'), 'every blursday at 9:00 x')).toContain(
      '"blursday" is not a day',
    );
  });

  it("keeps a schedule in a direct message its owner's alone: to an admin there as to anyone, there is no such schedule", async () => {
    const platform = newPlatform();
    const engine = replica(platform, () => new Date('2031-03-07T10:00:30Z'));
    const own = scheduleId(
      await engine.schedule(asker(DIRECT_MESSAGES, 'D-U1'), 'every day at 9:00 My own notes'),
    );
    const absent = `There is no schedule #${own} here (\`schedule list\` shows them).`;
    // In their own direct message with Spool, and on the web pages' Cancel, by its id.
    expect(
      await engine.schedule(asker(DIRECT_MESSAGES, 'D-ADMIN', 'UADMIN'), `cancel ${own}`),
    ).toBe(absent);
    const asAdmin = { platform: platformName, workspace: DIRECT_MESSAGES, user: 'UADMIN' };
    expect(await engine.cancelSchedule(asAdmin, own!)).toBe('absent');
    expect(await engine.schedule(asker(DIRECT_MESSAGES, 'D-U2', 'U2'), `cancel ${own}`)).toBe(
      absent,
    );
    expect(await engine.schedule(asker(DIRECT_MESSAGES, 'D-U1'), 'list')).toContain(
      `#${own} by <@U1>`,
    );
    expect(await engine.schedule(asker(DIRECT_MESSAGES, 'D-U1'), `cancel ${own}`)).toBe(
      `Cancelled schedule #${own}.`,
    );
  });
});
