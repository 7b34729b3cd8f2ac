import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../../src/adapters/slack/slack-adapter.ts';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import { openDatabase, type Database } from '../../../src/store/database.ts';
import { testAgent } from '../../support/agent.ts';
import { testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { createScratchDatabase } from '../../support/global-db.ts';
import { silentLogger } from '../../support/logger.ts';
import { freePort } from '../../support/process.ts';
import { deliver, serveSlackEvents, SIGNING_SECRET } from '../../support/slack-bot.ts';

const THREADS = 200;
const MESSAGES = 3;

let scratch: { url: string; drop(): Promise<void> };
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let adapter: SlackAdapter;
let pipeline: DeliveryEngine;
let port: number;
let server: Server;

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_concurrency');
  db = await openDatabase({ databaseUrl: scratch.url, dataDir: '', logger: silentLogger });
  llm = await new FakeOpenAi().start();
  llm.fallback = (request) => ({
    content: `answer to ${[...request.messages].reverse().find((m) => m.role === 'user')!.content}`,
  });
  slack = await new FakeSlack().start();
  port = await freePort();
  pipeline = testEngine(db, testAgent({ fake: llm, store: testStore(db) }));
  adapter = new SlackAdapter(
    { botToken: 'xoxb-test', signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl },
    pipeline,
    silentLogger,
  );
  await adapter.start();
  server = await serveSlackEvents(adapter, port);
  pipeline.start();
});
afterAll(async () => {
  server.close();
  await adapter.stop();
  await pipeline.stop(0);
  await db.close();
  await Promise.all([llm.stop(), slack.stop()]);
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
          expect(await deliver(port, body)).toBe(true);
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
