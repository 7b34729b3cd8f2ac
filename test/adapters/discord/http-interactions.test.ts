import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { startDiscordSpool, type DiscordSpool } from '../../support/discord-spool.ts';
import { APP_ID, nextId, type FakeDiscord } from '../../support/fake-discord.ts';
import { type FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import {
  ask,
  discordSigner,
  fixture,
  fixtures,
  type Payload,
} from '../../support/discord-interactions.ts';

const signer = discordSigner();
const publicKeyHex = signer.publicKeyHex;

let bot: DiscordSpool;
let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;
let url: string;

beforeAll(async () => {
  bot = await startDiscordSpool({ adapter: { publicKey: publicKeyHex } });
  ({ db, llm, discord } = bot);
  url = bot.interactionsUrl!;
});
afterAll(() => bot?.close());
beforeEach(() => {
  llm.requests.length = 0;
  discord.calls.length = 0;
  llm.fallback = (request) => ({ content: `reply to: ${lastUserText(request)}` });
});

const edits = (token: string) => discord.answersTo(token);
const callbacks = (token: string) => discord.callbacksOf(token);
const stored = (id: string) => db.prisma.inboxEntry.count({ where: { messageKey: id } });

/** A POST to Spool's endpoint, as Discord makes it. */
const post = (body: string, options?: Parameters<typeof signer.post>[2]) =>
  signer.post(url, body, options);

/** A click on `customId` (or its modal submitted with `values`) in fixture 04's channel. */
function component(customId: string, values?: Record<string, string>): Payload {
  const place = fixture('04');
  const id = nextId();
  const data = values
    ? {
        custom_id: customId,
        components: Object.entries(values).map(([custom_id, value]) => ({
          type: 1,
          components: [{ type: 4, custom_id, value }],
        })),
      }
    : { custom_id: customId, component_type: 2 };
  const message = { id: nextId(), channel_id: place.channel_id };
  return { ...place, id, token: `http-token-${id}`, type: values ? 5 : 3, data, message };
}

describe('Discord interactions over HTTP', () => {
  it('answers a signed PING with PONG', async () => {
    const ping = JSON.stringify({
      id: nextId(),
      application_id: APP_ID,
      type: 1,
      token: 't',
      version: 1,
    });
    expect(await post(ping)).toMatchObject({ status: 200, json: { type: 1 } });
  });

  it.each(fixtures.filter((f) => f.expect === 'answered').map((f) => f.file))(
    '%s over HTTP: deferred in the response, answered once through the webhook',
    async (file) => {
      const payload = discord.serveAttachments(fixture(file.slice(0, 2)), (name) => `in ${name}`);
      const response = await post(JSON.stringify(payload));
      expect(response).toMatchObject({ status: 200, json: { type: 5 } });
      await discord.waitFor(() => edits(payload.token).length === 1);
      expect(edits(payload.token)[0]!.body!.content).toBe(
        `reply to: ${lastUserText(llm.requests[0]!)}`,
      );
      // The deferral was the HTTP response: nothing was posted to the callback.
      expect(callbacks(payload.token)).toEqual([]);
      expect(await stored(payload.id)).toBe(1);
    },
  );

  it('acknowledges a click on a button of no one it knows, and stores nothing', async () => {
    const payload = fixture('06');
    expect(await post(JSON.stringify(payload))).toMatchObject({ status: 200, json: { type: 6 } });
    expect(callbacks(payload.token)).toEqual([]);
    expect(await stored(payload.id)).toBe(0);
  });

  it("answers a 👎 with its modal, and the modal's reason privately, each as the HTTP response", async () => {
    const asked = ask('rate me');
    await post(JSON.stringify(asked));
    await discord.waitFor(() => edits(asked.token).length === 1);
    const inbox = await db.prisma.inboxEntry.findFirstOrThrow({ where: { messageKey: asked.id } });
    const down = await post(JSON.stringify(component(`spool:feedback:down:${inbox.id}`)));
    expect(down).toMatchObject({
      status: 200,
      json: { type: 9, data: { custom_id: `spool:feedback-reason:${inbox.id}` } },
    });
    const reason = component(`spool:feedback-reason:${inbox.id}`, { reason: 'too short' });
    expect(await post(JSON.stringify(reason))).toMatchObject({
      status: 200,
      json: { type: 4, data: { flags: 64 } },
    });
    const rows = await db.prisma.answerFeedback.findMany({ where: { inboxId: inbox.id } });
    expect(rows.map((r) => [r.rating, r.reason])).toEqual([['down', 'too short']]);
    expect(discord.callsTo('POST', /\/callback$/)).toEqual([]);
  });

  it('refuses a wrong signature, a stale one and a body that is not JSON; stores nothing; serves the next', async () => {
    const payload = ask('refused?');
    const body = JSON.stringify(payload);
    const stranger = generateKeyPairSync('ed25519').privateKey;
    expect((await post(body, { key: stranger })).status).toBe(401);
    expect((await post(body, { signature: 'ab'.repeat(64) })).status).toBe(401);
    expect((await post(body, { signature: 'not hex' })).status).toBe(401);
    const hourAgo = String(Math.floor(Date.now() / 1000) - 3600);
    expect((await post(body, { timestamp: hourAgo })).status).toBe(401);
    expect((await post(body.slice(0, -1))).status).toBe(400);
    expect((await post('{"type": 2}')).status).toBe(400);
    const next = ask('and the next one');
    expect(await post(JSON.stringify(next))).toMatchObject({ status: 200, json: { type: 5 } });
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(edits(next.token)[0]!.body!.content).toBe('reply to: and the next one');
    expect(await stored(payload.id)).toBe(0);
    expect(llm.requests.map(lastUserText)).toEqual(['and the next one']);
  });

  it('answers an interaction once though it also came over the gateway', async () => {
    const payload = ask('twice delivered');
    discord.dispatchInteraction(payload);
    const response = await post(JSON.stringify(payload));
    expect(response.status).toBe(200);
    await discord.waitFor(() => edits(payload.token).length >= 1);
    // A later interaction's answer: whatever the first would still do is done by then.
    const next = ask('after the twice delivered');
    await post(JSON.stringify(next));
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(edits(payload.token)).toHaveLength(1);
    expect(await stored(payload.id)).toBe(1);
    expect(llm.requests.map(lastUserText).filter((t) => t === 'twice delivered')).toHaveLength(1);
  });

  it('acknowledges 50 interactions, each well within 3 s', async () => {
    const asks = Array.from({ length: 50 }, (_, i) => ask(`question ${i}`));
    // Ten at a time, as people in many channels would.
    const times: number[] = [];
    for (let i = 0; i < asks.length; i += 10) {
      const responses = await Promise.all(
        asks.slice(i, i + 10).map((p) => post(JSON.stringify(p))),
      );
      for (const r of responses) expect(r).toMatchObject({ status: 200, json: { type: 5 } });
      times.push(...responses.map((r) => r.ms));
    }
    await discord.waitFor(() => asks.every((p) => edits(p.token).length === 1), 60_000);
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
    console.info(
      `HTTP interactions acknowledged in ${at(0.5).toFixed(0)} ms median, ${at(0.9).toFixed(0)} ms p90, ${times.at(-1)!.toFixed(0)} ms max`,
    );
    expect(times.at(-1)).toBeLessThan(3_000);
  }, 120_000);
});
