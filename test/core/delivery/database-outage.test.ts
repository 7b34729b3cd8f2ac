/**
 * The database goes away under a running bot (a real Spool process on a PostgreSQL server of the
 * test's own), while a turn runs and messages arrive. What arrives then is not acknowledged, so
 * Slack sends it again; the running turn waits for the database instead of failing; and once the
 * database is back, every message is answered once, with no failure reply, without a restart.
 * OUTAGE_SECONDS (default 0) keeps the database away that long, Slack retrying meanwhile.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { startOwnPostgres, type OwnPostgres } from '../../support/own-postgres.ts';
import { freePort, startSpool, until } from '../../support/process.ts';
import { deliver, slowToolConfig, slowToolModel, startSlackBot } from '../../support/slack-bot.ts';

const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 0) * 1_000;

let db: OwnPostgres;
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  [db, llm, slack] = await Promise.all([
    startOwnPostgres(),
    new FakeOpenAi().start(),
    new FakeSlack().start(),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'spool-outage-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: db.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DATA_DIR: dir,
    LEASE_TTL_MS: '3000',
  };
}, 120_000);
afterAll(async () => {
  await Promise.all([llm.stop(), slack.stop()]);
  await db.remove();
  await rm(dir, { recursive: true, force: true });
});

const readiness = (port: number) =>
  fetch(`http://127.0.0.1:${port}/readyz`).then(
    (r) => r.status,
    () => 0,
  );
const replies = (channel: string) =>
  slack
    .callsTo('chat.postMessage')
    .filter((m) => m.channel === channel)
    .map((m) => String(m.text));
const asked = (text: string) =>
  llm.requests.some(
    (r) => r.messages.at(-1)?.role === 'user' && r.messages.at(-1)?.content === text,
  );

describe('the database goes away under traffic', () => {
  it.each([
    ['stopped (pg_ctl stop -m immediate)', () => db.stop('immediate')],
    ['killed (SIGKILL to the postmaster)', () => db.kill()],
  ])(
    'when it is %s: no acknowledged message is lost, none is answered twice, and the bot recovers by itself',
    async (_, outage) => {
      llm.fallback = slowToolModel(2);
      const port = await freePort();
      const bot = await startSlackBot(port, env);
      const channel = `C${Date.now()}`;
      try {
        expect(
          await deliver(
            port,
            eventBody({
              type: 'app_mention',
              user: 'U1',
              text: `<@${BOT_USER}> before`,
              ts: '1.1',
              channel,
            }),
          ),
        ).toBe(true);
        await slack.waitFor(() => asked('before'));
        await outage();
        await until(async () => ((await readiness(port)) === 503 ? true : undefined));

        // A new thread, and a follow-up in the thread whose turn is running: neither can be stored.
        const during = [
          eventBody({
            type: 'app_mention',
            user: 'U2',
            text: `<@${BOT_USER}> during`,
            ts: '2.1',
            channel: `${channel}B`,
          }),
          eventBody({
            type: 'message',
            channel_type: 'channel',
            user: 'U1',
            text: 'follow-up',
            ts: '1.2',
            thread_ts: '1.1',
            channel,
          }),
        ];
        for (const body of during) expect(await deliver(port, body)).toBe(false);
        // Slack retrying, once a second, for as long as the outage lasts: refused each time. (The
        // pause paces the traffic; nothing is concluded from it.)
        for (const down = Date.now(); Date.now() - down < OUTAGE_MS;) {
          for (const body of during) expect(await deliver(port, body, 1)).toBe(false);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }

        await db.start();
        const back = Date.now();
        await until(async () => ((await readiness(port)) === 200 ? true : undefined), 30_000);
        // Slack's retries of the same events.
        for (const body of during) expect(await deliver(port, body, 1)).toBe(true);
        await slack.waitFor(
          () => replies(channel).length >= 2 && replies(`${channel}B`).length >= 1,
          60_000,
        );

        expect(replies(channel)).toEqual(['answer to before', 'answer to follow-up']);
        expect(replies(`${channel}B`)).toEqual(['answer to during']);
        const firstReply = Math.min(
          ...slack.calls
            .filter((c) => c.method === 'chat.postMessage' && c.at >= back)
            .map((c) => c.at),
        );
        console.log(
          `outage of ${OUTAGE_MS / 1_000} s or less: the first reply came ${firstReply - back} ms after the database returned`,
        );
        expect(firstReply - back).toBeLessThan(30_000);
        expect(llm.rejections).toEqual([]);
      } finally {
        bot.child.kill('SIGTERM');
        await bot.done;
      }
    },
  );

  it('over Socket Mode, an event that cannot be stored is not acknowledged, and is answered once when Slack sends it again', async () => {
    llm.fallback = slowToolModel(1);
    const port = await freePort();
    const bot = startSpool([], {
      env: {
        ...env,
        SLACK_BOT_TOKEN: 'xoxb-socket',
        SLACK_APP_TOKEN: 'xapp-socket',
        PORT: String(port),
      },
      timeoutMs: 600_000,
    });
    bot.done.catch(() => {});
    const channel = `CS${Date.now()}`;
    const inThread = (ts: string, text: string) =>
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text,
        ts,
        thread_ts: '1.1',
        channel,
      });
    try {
      await until(async () => ((await readiness(port)) === 200 ? true : undefined), 30_000);
      await slack.sendSocketEvent(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> hello`,
          ts: '1.1',
          channel,
        }),
      );
      await slack.waitFor(() => replies(channel).length === 1, 30_000);

      await db.stop('immediate');
      await until(async () => ((await readiness(port)) === 503 ? true : undefined));
      const whileDown = inThread('1.2', 'while down');
      const unstored = await slack.pushSocketEvent(whileDown);
      await db.start();
      await until(async () => ((await readiness(port)) === 200 ? true : undefined), 30_000);
      // A later message of the same thread is stored after the first one's try: once it is
      // acknowledged, that try is over.
      await slack.sendSocketEvent(inThread('1.3', 'after'));
      expect(unstored.isAcked()).toBe(false);
      await slack.sendSocketEvent(whileDown, 1);
      await slack.waitFor(() => replies(channel).length === 3, 60_000);
      expect(replies(channel)).toEqual([
        'answer to hello',
        'answer to after',
        'answer to while down',
      ]);
    } finally {
      bot.child.kill('SIGTERM');
      await bot.done.catch(() => {});
    }
  });
});
