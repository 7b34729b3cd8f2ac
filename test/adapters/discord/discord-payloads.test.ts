import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { fixtures, type Payload } from '../../support/discord-interactions.ts';
import { startDiscordSpool, type DiscordSpool } from '../../support/discord-spool.ts';
import type { FakeDiscord } from '../../support/fake-discord.ts';
import { type FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';

let bot: DiscordSpool;
let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;

beforeAll(async () => {
  // Every guild and DMs: the payloads come from many places.
  bot = await startDiscordSpool();
  ({ db, llm, discord } = bot);
});
afterAll(() => bot?.close());
beforeEach(() => {
  llm.requests.length = 0;
  discord.calls.length = 0;
  llm.fallback = (request) => ({ content: `reply to: ${lastUserText(request)}` });
});

const edits = (token: string) => discord.answersTo(token);
const callbacks = (token: string) => discord.callbacksOf(token);
const fileText = (name: string) => `the contents of ${name}`;

/** The payload with each attachment it resolves served by the fake, where its URL now points. */
const served = (payload: Payload) => discord.serveAttachments(payload, fileText);

describe('real Discord payloads, replayed through discord.js', () => {
  it('holds at least six, each with its source', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(6);
    for (const f of fixtures) {
      expect(f.source.length).toBeGreaterThan(0);
      expect(['answered', 'noted']).toContain(f.expect);
      if (f.expect === 'answered') expect(f.words.length).toBeGreaterThan(0);
    }
  });

  it.each(fixtures)(
    '$file: $expect, and the gateway serves the next interaction',
    async ({ payload, expect: outcome, words }) => {
      discord.dispatchInteraction(served(payload));
      // The next /ask in the same place: whatever the payload comes to in its lane comes before
      // this answer.
      const next = discord.sendCommand({
        name: 'ask',
        options: [{ name: 'prompt', value: 'and the next one' }],
        guildId: payload.guild_id,
        channelId: payload.channel_id,
      });
      await discord.waitFor(() => edits(next.token).length === 1);
      expect(edits(next.token)[0]!.body!.content).toBe('reply to: and the next one');

      if (outcome === 'noted') {
        expect(callbacks(payload.token)).toEqual([]);
        expect(await db.prisma.inboxEntry.count({ where: { messageKey: payload.id } })).toBe(0);
        return;
      }
      const heard = lastUserText(llm.requests[0]!);
      for (const word of words) expect(heard).toContain(word);
      expect(callbacks(payload.token).map((c) => c.body)).toEqual([
        expect.objectContaining({ type: 5 }),
      ]);
      expect(edits(payload.token).map((c) => c.body!.content)).toEqual([`reply to: ${heard}`]);
      expect(
        await db.prisma.inboxEntry.findFirstOrThrow({
          where: { messageKey: payload.id },
          include: { lane: true },
        }),
      ).toMatchObject({
        status: 'answered',
        lane: { channel: payload.channel_id },
      });
      // A file the payload carries was read from the CDN, and what it holds reached the model.
      const attachments = Object.values(
        (payload.data as { resolved?: { attachments?: Record<string, { filename: string }> } })
          .resolved?.attachments ?? {},
      );
      for (const { filename } of attachments) {
        expect(discord.downloads.map((d) => d.path)).toContainEqual(
          expect.stringMatching(new RegExp(`/${filename}$`)),
        );
        expect(JSON.stringify(llm.requests[0]!.messages)).toContain(fileText(filename));
      }
    },
  );
});
