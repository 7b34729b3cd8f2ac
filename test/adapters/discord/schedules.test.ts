import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAdapter } from '../../../src/adapters/discord/discord-adapter.ts';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { APP_ID, FakeDiscord, nextId } from '../../support/fake-discord.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';
import { until } from '../../support/process.ts';

/**
 * `/schedule` over Discord's gateway and REST (the fake), and a run: no interaction asked for it,
 * so its header is a channel message with a thread on it, and the answer goes in that thread.
 */
const GUILD = '400000000000000001';

let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;
let engine: DeliveryEngine;
let adapter: DiscordAdapter;
let now = new Date('2031-03-03T08:59:30Z');

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  llm.fallback = () => ({ content: 'All quiet.' });
  discord = await new FakeDiscord().start();
  engine = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db), tools: [] }),
    { now: () => now, scheduleTimeZone: 'Europe/Paris', pollMs: 100 },
    { schedules: new ScheduleLedger(db.prisma) },
  );
  adapter = new DiscordAdapter(
    {
      token: 'bot-token',
      applicationId: APP_ID,
      guildId: GUILD,
      apiUrl: discord.apiUrl,
      allowedGuilds: [GUILD],
    },
    engine,
    silentLogger,
  );
  await adapter.start();
  engine.start();
});

afterAll(async () => {
  await adapter?.stop();
  await engine?.stop(0);
  await discord?.stop();
  await llm?.stop();
  await db?.close();
});

/** `/schedule what:<words>` in `channel`: the private answer's text. */
async function schedule(channel: string, words: string): Promise<string> {
  const { token } = discord.sendCommand({
    name: 'schedule',
    options: [{ name: 'what', value: words }],
    guildId: GUILD,
    channelId: channel,
  });
  const answered = () =>
    discord.callsTo('POST', /\/callback$/).find((c) => c.path.includes(`/${token}/`))?.body as
      { data?: { content?: string; flags?: number } } | undefined;
  const reply = await until(() => answered());
  expect(reply.data?.flags).toBe(64); // ephemeral
  return String(reply.data?.content);
}

describe('/schedule on Discord', () => {
  it('runs each tick in a thread on a header in the channel', async () => {
    const channel = nextId();
    const answer = await schedule(channel, '"every day at 10:00" Check the on-call queue');
    expect(answer).toContain('"every day at 10:00" (Europe/Paris): Check the on-call queue');
    now = new Date('2031-03-03T09:00:05Z');
    const header = await until(
      () => discord.callsTo('POST', new RegExp(`^/channels/${channel}/messages$`))[0],
    );
    expect(header.body?.content).toBe('Scheduled: Check the on-call queue');
    const threadCall = await until(
      () => discord.callsTo('POST', new RegExp(`^/channels/${channel}/messages/\\d+/threads$`))[0],
    );
    expect(threadCall.body?.name).toBe('Scheduled: Check the on-call queue');
    // The answer goes to another channel: the thread (the channel itself has only the header).
    const inThread = () =>
      discord
        .callsTo('POST', /^\/channels\/\d+\/messages$/)
        .filter((c) => c.path !== `/channels/${channel}/messages`);
    await until(() => (inThread().length === 1 ? true : undefined));
    expect(inThread()[0]!.body?.content).toBe('All quiet.');
    const listed = await schedule(channel, 'list');
    expect(listed).toContain('Next run: Tue, 4 Mar 2031, 10:00 CET.');
  });

  it('pauses a schedule in a channel Spool lost access to, and tells its owner in a direct message', async () => {
    const channel = nextId();
    discord.refuse = (call) =>
      call.method === 'POST' && call.path === `/channels/${channel}/messages`
        ? { status: 403, code: 50001, message: 'Missing Access' }
        : undefined;
    try {
      const answer = await schedule(channel, 'every hour Count the open tickets');
      const id = /#(\d+)/.exec(answer)![1]!;
      now = new Date('2031-03-03T10:00:05Z');
      const dm = await until(() =>
        discord
          .callsTo('POST', /^\/channels\/\d+\/messages$/)
          .find((c) => String(c.body?.content).startsWith(`Your schedule #${id} `)),
      );
      expect(dm.body?.content).toBe(
        `Your schedule #${id} ("every hour": Count the open tickets) is paused: Spool can no longer post in the channel (Missing Access).`,
      );
      expect(await schedule(channel, 'list')).toContain(
        'Paused: Spool can no longer post in the channel (Missing Access).',
      );
    } finally {
      discord.refuse = undefined;
    }
  });
});
