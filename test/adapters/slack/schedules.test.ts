import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../../src/adapters/slack/slack-adapter.ts';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { FakeSlack, signedRequest, TEAM } from '../../support/fake-slack.ts';
import { silentLogger } from '../../support/logger.ts';
import { freePort } from '../../support/process.ts';
import { serveSlackEvents } from '../../support/slack-bot.ts';

/**
 * `/spool schedule` over Slack's HTTP API (a real slash command payload, signed), and its runs: the
 * header a new message in the channel, the answer in its thread; the clock is the test's.
 */
const SLASH = (
  JSON.parse(
    readFileSync(
      new URL(
        '../../fixtures/slack-payloads/79-slash-command-other-with-args.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ) as { payload: Record<string, string> }
).payload;
const SIGNING_SECRET = 'schedules-signing-secret';

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let engine: DeliveryEngine;
let adapter: SlackAdapter;
let server: Server;
let port: number;
let now = new Date('2031-03-03T23:59:30Z');
let commands = 0;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  llm.fallback = () => ({ content: 'No incidents yesterday.' });
  slack = await new FakeSlack().start();
  engine = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db), tools: [] }),
    { now: () => now, scheduleTimeZone: 'UTC', pollMs: 100 },
    { schedules: new ScheduleLedger(db.prisma) },
  );
  adapter = new SlackAdapter(
    { botToken: 'xoxb-test', apiUrl: slack.apiUrl, signingSecret: SIGNING_SECRET },
    engine,
    silentLogger,
  );
  await adapter.start();
  port = await freePort();
  server = await serveSlackEvents(adapter, port);
  engine.start();
});

afterAll(async () => {
  await adapter?.stop();
  await engine?.stop(0);
  await new Promise((resolve) => server?.close(resolve));
  await Promise.all([slack?.stop(), llm?.stop()]);
  await db?.close();
});

/** `/spool <text>` from `user` in `channel`, as Slack sends it; resolves with the private answer. */
async function spool(channel: string, user: string, text: string): Promise<string> {
  const id = `cmd-${++commands}`;
  const body = new URLSearchParams({
    ...SLASH,
    team_id: TEAM,
    channel_id: channel,
    user_id: user,
    command: '/spool',
    text,
    response_url: slack.responseUrl(id),
  }).toString();
  const response = await fetch(
    `http://127.0.0.1:${port}/slack/events`,
    signedRequest(body, SIGNING_SECRET, 'application/x-www-form-urlencoded'),
  );
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  await slack.waitFor(() => slack.responses(id).length > 0);
  return slack.responses(id).join('\n');
}

const postsIn = (channel: string) =>
  slack.callsTo('chat.postMessage').filter((m) => m.channel === channel);

describe('/spool schedule', () => {
  it('schedules in the person’s Slack time zone; each run is a header in the channel and the owner’s turn in its thread', async () => {
    slack.timeZones.set('U-tokyo', 'Asia/Tokyo');
    const answer = await spool(
      'CSCHED',
      'U-tokyo',
      `schedule "every day at 9:00" Summarize yesterday's incidents`,
    );
    expect(answer).toMatch(
      /^Scheduled #\d+: "every day at 9:00" \(Asia\/Tokyo\): Summarize yesterday's incidents\nNext run: Tue, 4 Mar 2031, 09:00 GMT\+9\./,
    );
    // 9:00 in Tokyo is 0:00 UTC.
    now = new Date('2031-03-04T00:00:05Z');
    await slack.waitFor(() => postsIn('CSCHED').length === 2);
    const [header, reply] = postsIn('CSCHED');
    expect(header).toMatchObject({ text: "Scheduled: Summarize yesterday's incidents" });
    expect(header!.thread_ts).toBeUndefined();
    expect(reply).toMatchObject({
      thread_ts: slack.tsOf(slack.calls.find((c) => c.args === header)!),
      text: 'No incidents yesterday.',
    });
    const asked = llm.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(asked).toEqual(["Summarize yesterday's incidents"]);
    const listed = await spool('CSCHED', 'U-other', 'schedule list');
    expect(listed).toContain('by <@U-tokyo>: "every day at 9:00" (Asia/Tokyo)');
    expect(listed).toContain('Next run: Wed, 5 Mar 2031, 09:00 GMT+9.');
  });

  it('pauses a schedule whose channel Spool left, tells its owner in a direct message, and lists why', async () => {
    slack.platformError = (call) =>
      call.method === 'chat.postMessage' && call.args.channel === 'CLEFT'
        ? 'not_in_channel'
        : undefined;
    try {
      const answer = await spool('CLEFT', 'U-owner', 'schedule every hour Check the queue');
      const id = /#(\d+)/.exec(answer)![1]!;
      expect(answer).toContain('(UTC): Check the queue');
      now = new Date('2031-03-04T01:00:05Z');
      await slack.waitFor(() => postsIn('DU-owner').length === 1);
      expect(postsIn('DU-owner')[0]!.text).toBe(
        `Your schedule #${id} ("every hour": Check the queue) is paused: Spool can no longer post in the channel (not_in_channel).`,
      );
      expect(await spool('CLEFT', 'U-owner', 'schedule list')).toContain(
        'Paused: Spool can no longer post in the channel (not_in_channel).',
      );
    } finally {
      slack.platformError = undefined;
    }
  });

  it('says what is wrong with a rule it cannot read, and how to write one', async () => {
    const answer = await spool('CSCHED', 'U1', 'schedule every blursday at 9:00 Hello');
    expect(answer).toContain('"blursday" is not a day');
    expect(answer).toContain('schedule list');
  });
});
