import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/store/database.ts';
import { type FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, type FakeSlack } from '../../support/fake-slack.ts';
import { createScratchDatabase } from '../../support/global-db.ts';
import { silentLogger } from '../../support/logger.ts';
import { deliver } from '../../support/slack-bot.ts';
import { startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

const THREADS = 200;
const MESSAGES = 3;

let scratch: { url: string; drop(): Promise<void> };
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let bot: SlackSpool;

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_concurrency');
  db = await openDatabase({ databaseUrl: scratch.url, dataDir: '', logger: silentLogger });
  bot = await startSlackSpool({ db });
  ({ llm, slack } = bot);
  llm.fallback = (request) => ({
    content: `answer to ${lastUserText(request)}`,
  });
});
afterAll(async () => {
  await bot.close();
  await db.close();
  await scratch.drop();
});

describe(`${THREADS} threads × ${MESSAGES} messages at once`, () => {
  it('answers every message once, in order within its thread', async () => {
    // Each thread's messages follow one another, as a person types them; all threads at once.
    await Promise.all(
      Array.from({ length: THREADS }, async (_, t) => {
        const thread = `${3000 + t}.1`;
        for (let m = 1; m <= MESSAGES; m++) {
          const text = `t${t} m${m}`;
          const body =
            m === 1
              ? eventBody({
                  type: 'app_mention',
                  user: 'U1',
                  text: `<@${BOT_USER}> ${text}`,
                  ts: thread,
                  channel: 'CLOAD',
                })
              : eventBody({
                  type: 'message',
                  channel_type: 'channel',
                  user: 'U1',
                  text,
                  ts: `${3000 + t}.${m}`,
                  thread_ts: thread,
                  channel: 'CLOAD',
                });
          expect(await deliver(bot.port, body)).toBe(true);
        }
      }),
    );
    await slack.waitFor(
      () => slack.callsTo('chat.postMessage').length >= THREADS * MESSAGES,
      120_000,
    );
    const byThread = new Map<string, string[]>();
    for (const m of slack.callsTo('chat.postMessage'))
      byThread.set(String(m.thread_ts), [
        ...(byThread.get(String(m.thread_ts)) ?? []),
        String(m.text),
      ]);
    const outOfOrder = [...Array(THREADS).keys()].filter((t) => {
      const expected = Array.from({ length: MESSAGES }, (_, m) => `answer to t${t} m${m + 1}`);
      return JSON.stringify(byThread.get(`${3000 + t}.1`)) !== JSON.stringify(expected);
    });
    expect(outOfOrder).toEqual([]);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(THREADS * MESSAGES);
    expect(llm.rejections).toEqual([]);
  });
});
