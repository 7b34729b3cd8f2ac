import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWorkingLine } from '../../../src/adapters/discord/text.ts';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { testTool } from '../../support/agent.ts';
import { startDiscordSpool, GUILD, type DiscordSpool } from '../../support/discord-spool.ts';
import { nextId, type FakeDiscord } from '../../support/fake-discord.ts';
import type { FakeOpenAi } from '../../support/fake-openai.ts';
import { until } from '../../support/process.ts';

/**
 * `/schedule` over Discord's gateway and REST (the fake), and a run: no interaction asked for it,
 * so its header is a channel message with a thread on it, and the answer goes in that thread.
 */
const STOPPER = '300000000000000007';

let bot: DiscordSpool;
let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;
let now = new Date('2031-03-03T08:59:30Z');

beforeAll(async () => {
  const ticket = testTool('ticket', () => ({ content: 'ticket 7: open', isError: false }));
  bot = await startDiscordSpool({
    tools: [ticket],
    engine: {
      now: () => now,
      scheduleTimeZone: 'Europe/Paris',
      pollMs: 100,
      // A run that calls `ticket` waits for an approver, as any turn does.
      policy: {
        rules: [{ match: { platform: 'discord' }, approve: ['ticket'], approvers: [STOPPER] }],
      },
    },
    deps: (db) => ({ schedules: new ScheduleLedger(db.prisma) }),
    adapter: { allowedGuilds: [GUILD] },
  });
  ({ db, llm, discord } = bot);
  llm.fallback = () => ({ content: 'All quiet.' });
});

afterAll(() => bot?.close());

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

/** The Stop button's id on a message Spool posted, if it has one. */
const stopOf = (c: { body?: Record<string, unknown> }) =>
  (c.body?.components as Array<{ components: Array<{ custom_id: string }> }> | undefined)?.[0]
    ?.components[0]?.custom_id;

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
    // The answer goes to another channel: the thread (the channel itself has only the header),
    // after the run's status, which goes once the answer is ready.
    const inThread = () =>
      discord
        .callsTo('POST', /^\/channels\/\d+\/messages$/)
        .filter((c) => c.path !== `/channels/${channel}/messages`);
    await until(() => (inThread().length === 2 ? true : undefined));
    expect(inThread().map((c) => c.body?.content)).toEqual(['⏳ Spool is thinking…', 'All quiet.']);
    const thread = /^\/channels\/(\d+)\//.exec(inThread()[0]!.path)![1]!;
    expect(
      discord.callsTo('DELETE', new RegExp(`^/channels/${thread}/messages/\\d+$`)),
    ).toHaveLength(1);
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

  it('shows a run’s status in its thread, with Stop, which ends the run; an /ask’s Stop there ends the /ask', async () => {
    const channel = nextId();
    const answer = await schedule(channel, '"every day at 11:00" Summarise the incidents');
    const id = /#(\d+)/.exec(answer)![1]!;
    llm.latencyMs = 30_000;
    let statusAt: string;
    let thread: string;
    try {
      now = new Date('2031-03-04T10:00:05Z');
      // Spool's own message in the run's thread: what it does, and Stop for this run.
      const status = await until(() =>
        discord
          .callsTo('POST', /^\/channels\/\d+\/messages$/)
          .find(
            (c) =>
              isWorkingLine(c.body?.content) && stopOf(c)?.startsWith(`spool:stop:schedule:${id}:`),
          ),
      );
      thread = /^\/channels\/(\d+)\//.exec(status.path)![1]!;
      const stop = stopOf(status)!;
      expect(stop).toBe(`spool:stop:schedule:${id}:2031-03-04T10:00:00.000Z`);
      expect(thread).not.toBe(channel);
      // The status as the turn goes on, on that message, Stop kept.
      const shown = await until(
        () => discord.callsTo('PATCH', new RegExp(`^/channels/${thread}/messages/\\d+$`))[0],
      );
      expect(shown.body).toMatchObject({
        content: '⏳ Spool is thinking…',
        components: [{ components: [{ custom_id: stop }] }],
      });
      statusAt = shown.path;
      // Someone else in the guild clicks Stop, in the thread.
      discord.clickButton({
        customId: stop,
        messageId: /(\d+)$/.exec(statusAt)![1]!,
        guildId: GUILD,
        channelId: thread,
        userId: STOPPER,
      });
      await until(() =>
        discord
          .callsTo('POST', new RegExp(`^/channels/${thread}/messages$`))
          .find((c) => c.body?.content === STOPPED_REPLY),
      );
    } finally {
      llm.latencyMs = 0;
    }
    // The status went before the note came.
    expect(discord.callsTo('DELETE', /^\/channels\//).map((c) => c.path)).toContain(statusAt);
    const [run] = await db.prisma.inboxEntry.findMany({
      where: { platform: 'discord', lane: { thread }, messageKey: { startsWith: 'schedule:' } },
    });
    expect(run?.stoppedBy).toBe(STOPPER);

    // An /ask in the run's thread is the thread's own conversation: its Stop, on its deferred
    // response, stops it there.
    llm.latencyMs = 30_000;
    try {
      const asked = discord.sendCommand({
        name: 'ask',
        options: [{ name: 'prompt', value: 'And yesterday?' }],
        guildId: GUILD,
        channelId: thread,
      });
      const working = () =>
        discord
          .callsTo('PATCH', /@original$/)
          .find((c) => c.path.includes(`/${asked.token}/`) && stopOf(c));
      const stop = stopOf(await until(working))!;
      discord.clickButton({
        customId: stop,
        messageId: nextId(),
        guildId: GUILD,
        channelId: thread,
        userId: STOPPER,
        responseTo: { interactionId: asked.id, userId: '300000000000000001' },
      });
      await until(() =>
        discord
          .callsTo('PATCH', /@original$/)
          .find((c) => c.path.includes(`/${asked.token}/`) && c.body?.content === STOPPED_REPLY),
      );
    } finally {
      llm.latencyMs = 0;
    }
  });
  it('asks for a run’s approval in its thread with Approve and Deny, as an /ask does', async () => {
    llm.fallback = (request) => {
      const last = request.messages.at(-1)!;
      return last.role === 'user' && String(last.content).includes('ticket 7')
        ? { toolCalls: [{ id: 't', name: 'ticket', arguments: '{"id":7}' }] }
        : { content: 'All quiet.' };
    };
    const channel = nextId();
    await schedule(channel, '"every day at 12:00" Look at ticket 7');
    now = new Date('2031-03-04T11:00:05Z');
    const prompt = await until(() =>
      discord
        .callsTo('POST', /^\/channels\/\d+\/messages$/)
        .find((c) => String(c.body?.content).includes('`ticket`')),
    );
    const buttons = (prompt.body?.components as Array<{ components: Array<{ label: string }> }>)[0]!
      .components;
    expect(buttons.map((b) => b.label)).toEqual(['Approve', 'Deny']);
  });
});
