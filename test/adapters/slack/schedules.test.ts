import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleLedger } from '../../../src/store/delivery/schedule-ledger.ts';
import type { FakeOpenAi } from '../../support/fake-openai.ts';
import { TEAM, type FakeSlack } from '../../support/fake-slack.ts';
import { expectAcknowledged, startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

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

let bot: SlackSpool;
let llm: FakeOpenAi;
let slack: FakeSlack;
let now = new Date('2031-03-03T23:59:30Z');
let commands = 0;

beforeAll(async () => {
  bot = await startSlackSpool({
    engine: { now: () => now, scheduleTimeZone: 'UTC', pollMs: 100 },
    deps: (db) => ({ schedules: new ScheduleLedger(db.prisma) }),
  });
  ({ llm, slack } = bot);
  llm.fallback = () => ({ content: 'No incidents yesterday.' });
});

afterAll(() => bot?.close());

/** `/spool <text>` from `user` in `channel`, as Slack sends it; resolves with the private answer. */
async function spool(channel: string, user: string, text: string): Promise<string> {
  const id = `cmd-${++commands}`;
  await expectAcknowledged(
    bot.command({
      ...SLASH,
      team_id: TEAM,
      channel_id: channel,
      user_id: user,
      command: '/spool',
      text,
      response_url: slack.responseUrl(id),
    }),
  );
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
