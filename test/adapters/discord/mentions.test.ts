import { readFileSync } from 'node:fs';
import { GatewayIntentBits } from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { openAiClientFor, testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { BOT_ID, FakeDiscord, nextId } from '../../support/fake-discord.ts';
import { type ChatRequest, FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { UNREAD_WORDS } from '../../../src/adapters/discord/text.ts';
import { GUILD, startDiscordAdapter } from '../../support/discord-spool.ts';

/**
 * Messages that mention Spool (a real MESSAGE_CREATE, test/fixtures/discord-payloads/messages),
 * with DISCORD_MESSAGE_CONTENT on and off, through discord.js against the fake gateway.
 */
const BOT_ROLE = '400000000000000002';
const OTHER_ROLE = '400000000000000003';
const FIXTURE = JSON.parse(
  readFileSync(
    new URL(
      '../../fixtures/discord-payloads/messages/01-mention-message-create.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as { payload: Record<string, unknown> };

const REPLY = JSON.parse(
  readFileSync(
    new URL(
      '../../fixtures/discord-payloads/messages/02-reply-mentioning-with-replied-image.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as { words: string[]; payload: Record<string, unknown> };

let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  discord = await new FakeDiscord().start();
});
beforeEach(() => {
  llm.fallback = (request: ChatRequest) => ({
    content: `answer to: ${lastUserText(request)}`,
  });
});
afterAll(async () => {
  await discord.stop();
  await llm.stop();
  await db.close();
});

/** `modelTimeoutMs`: how long a model request may take (the test client's 10 s by default). */
async function startAdapter(messageContent: boolean, modelTimeoutMs?: number) {
  const client = modelTimeoutMs
    ? { llm: openAiClientFor(llm, 0, { timeoutMs: modelTimeoutMs }) }
    : {};
  const pipeline = testEngine(
    db,
    testAgent({ fake: llm, store: testStore(db), tools: [], ...client }),
  );
  return (await startDiscordAdapter(pipeline, { apiUrl: discord.apiUrl, messageContent })).stop;
}

/** The fixture's message, sent anew in `channel` (its own id), with `changes`. */
function mention(channel: string, changes: Record<string, unknown> = {}) {
  const id = nextId();
  discord.dispatchMessage({ ...FIXTURE.payload, id, channel_id: channel, ...changes });
  return id;
}
const posts = (channel: string) =>
  discord.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${channel}/messages`);

describe('Discord mentions', () => {
  it('with DISCORD_MESSAGE_CONTENT, answers a mention and a reply to Spool in the channel, as replies to them, with 👍/👎; other messages are left alone', async () => {
    const stop = await startAdapter(true);
    try {
      const wanted =
        GatewayIntentBits.Guilds |
        GatewayIntentBits.GuildMessages |
        GatewayIntentBits.DirectMessages |
        GatewayIntentBits.MessageContent;
      expect(discord.intents.at(-1)).toBe(wanted);
      const ch = nextId();
      const first = mention(ch);
      await discord.waitFor(() => posts(ch).length === 1);
      expect(posts(ch)[0]!.body).toMatchObject({
        content: 'answer to: Test',
        message_reference: { message_id: first },
        allowed_mentions: { parse: [] },
        components: [
          {
            components: [
              { label: '👍', custom_id: expect.stringMatching(/^spool:feedback:up:\d+$/) },
              { label: '👎', custom_id: expect.stringMatching(/^spool:feedback:down:\d+$/) },
            ],
          },
        ],
      });
      // Not for Spool (no mention, a reply to someone else), and a bot's: left alone.
      mention(ch, { mentions: [], content: 'just chatting' });
      mention(ch, {
        mentions: [],
        content: 'agreed',
        referenced_message: { author: { id: '300000000000000009' } },
      });
      mention(ch, { author: { id: '300000000000000008', bot: true } });
      // A reply to Spool's answer, without a mention: answered, in the same conversation.
      const reply = mention(ch, {
        mentions: [],
        content: 'and then?',
        referenced_message: { id: first, author: { id: BOT_ID, bot: true } },
      });
      await discord.waitFor(() => posts(ch).length === 2);
      expect(posts(ch)[1]!.body).toMatchObject({
        content: 'answer to: and then?',
        message_reference: { message_id: reply },
      });
      // Answered once posted: the row is marked just after.
      const rows = () =>
        db.prisma.inboxEntry.findMany({
          where: { platform: 'discord', lane: { channel: ch } },
          orderBy: { id: 'asc' },
        });
      await expect
        .poll(async () => (await rows()).map((r) => [r.messageKey, r.text, r.status]))
        .toEqual([
          [`message:${first}`, 'Test', 'answered'],
          [`message:${reply}`, 'and then?', 'answered'],
        ]);
    } finally {
      await stop();
    }
  });

  it('without it, asks for no privileged intent, and answers a mention, a mention of its role and a DM; a reply without a mention is left alone', async () => {
    const stop = await startAdapter(false);
    try {
      expect(discord.intents.at(-1)).toBe(
        GatewayIntentBits.Guilds |
          GatewayIntentBits.GuildMessages |
          GatewayIntentBits.DirectMessages,
      );
      // The guild as Discord sends it when Spool joins: its managed role is tagged with its id.
      discord.dispatchGuild({
        id: GUILD,
        name: 'Test guild',
        owner_id: '300000000000000009',
        roles: [
          {
            id: GUILD,
            name: '@everyone',
            permissions: '0',
            position: 0,
            color: 0,
            hoist: false,
            managed: false,
            mentionable: false,
            flags: 0,
          },
          {
            id: BOT_ROLE,
            name: 'Spool',
            permissions: '0',
            position: 1,
            color: 0,
            hoist: false,
            managed: true,
            mentionable: false,
            flags: 0,
            tags: { bot_id: BOT_ID },
          },
          {
            id: OTHER_ROLE,
            name: 'Ops',
            permissions: '0',
            position: 2,
            color: 0,
            hoist: false,
            managed: false,
            mentionable: true,
            flags: 0,
          },
        ],
        channels: [],
        members: [],
        emojis: [],
        stickers: [],
      });
      const ch = nextId();
      const first = mention(ch);
      await discord.waitFor(() => posts(ch).length === 1);
      expect(posts(ch)[0]!.body).toMatchObject({
        content: 'answer to: Test',
        message_reference: { message_id: first },
      });
      // Another role's mention, and a reply to Spool without a mention: left alone.
      mention(ch, {
        mentions: [],
        content: `<@&${OTHER_ROLE}> deploy?`,
        mention_roles: [OTHER_ROLE],
      });
      mention(ch, {
        mentions: [],
        content: 'and then?',
        referenced_message: { id: first, author: { id: BOT_ID, bot: true } },
      });
      // Spool's own role mentioned: answered, without the mention.
      const byRole = mention(ch, {
        mentions: [],
        content: `<@&${BOT_ROLE}> what is up?`,
        mention_roles: [BOT_ROLE],
      });
      await discord.waitFor(() => posts(ch).length === 2);
      expect(posts(ch)[1]!.body).toMatchObject({
        content: 'answer to: what is up?',
        message_reference: { message_id: byRole },
      });
      // A DM: no guild, no mention, answered.
      const dm = nextId();
      const inDm = { ...FIXTURE.payload, guild_id: undefined, member: undefined };
      const direct = nextId();
      discord.dispatchMessage({
        ...inDm,
        id: direct,
        channel_id: dm,
        channel_type: 1,
        mentions: [],
        content: 'hello in private',
      });
      await discord.waitFor(() => posts(dm).length === 1);
      expect(posts(dm)[0]!.body).toMatchObject({
        content: 'answer to: hello in private',
        message_reference: { message_id: direct },
      });
      expect(
        (
          await db.prisma.inboxEntry.findMany({
            where: { platform: 'discord', lane: { channel: ch } },
            orderBy: { id: 'asc' },
          })
        ).map((r) => r.messageKey),
      ).toEqual([`message:${first}`, `message:${byRole}`]);
    } finally {
      await stop();
    }
  });

  it('reads the message a mention replies to after the words, quoted (a note where Discord hides it), and the files shared with the mention', async () => {
    const stop = await startAdapter(false);
    llm.fallback = (request: ChatRequest) => ({
      content: [
        `asked: ${lastUserText(request)}`,
        ...request.messages
          .filter((m) => m.role === 'tool')
          .map((m) => `read: ${String(m.content)}`),
      ].join('\n'),
    });
    try {
      const ch = nextId();
      const author = { id: '300000000000000009', username: 'alice' };
      // "@Spool summarize this", sent as a reply to Alice's message that mentions Spool too (so
      // Discord gives its words), with a file of the person's own.
      const csv = Buffer.from('region,units\nnorth,42\n');
      const url = discord.serve('https://cdn.discordapp.com/attachments/1/2/sales.csv?ex=1', csv);
      const asked = mention(ch, {
        type: 19,
        content: `<@${BOT_ID}> summarize this`,
        attachments: [
          { id: nextId(), filename: 'sales.csv', content_type: 'text/csv', size: csv.length, url },
        ],
        message_reference: { message_id: '500000000000000001', channel_id: ch },
        referenced_message: {
          id: '500000000000000001',
          type: 0,
          author,
          content: `<@${BOT_ID}> the launch moved to Friday`,
          attachments: [
            { id: nextId(), filename: 'plan.pdf', size: 10, url: 'https://cdn.discordapp.com/x' },
          ],
        },
      });
      await discord.waitFor(() => posts(ch).length === 1);
      expect(posts(ch)[0]!.body).toMatchObject({ message_reference: { message_id: asked } });
      const answer = String(posts(ch)[0]!.body!.content);
      expect(answer).toContain(
        `asked: summarize this\n\nThe message (from <@${author.id}>):\n> <@${BOT_ID}> the launch moved to Friday\n> [plan.pdf]`,
      );
      expect(answer).toContain(`read: ${csv.toString()}`);
      expect(discord.downloads).toContainEqual({
        path: expect.stringMatching(/\/sales\.csv$/),
        authorization: undefined,
      });
      // A reply to a message Discord gives no words of (no Message Content intent): the note.
      mention(ch, {
        type: 19,
        content: `<@${BOT_ID}> and this?`,
        referenced_message: { id: nextId(), type: 0, author, content: '', attachments: [] },
      });
      await discord.waitFor(() => posts(ch).length === 2);
      expect(String(posts(ch)[1]!.body!.content)).toContain(
        `asked: and this?\n\nThe message (from <@${author.id}>):\n> ${UNREAD_WORDS}`,
      );
      // A mention replying to Spool's own answer: that answer is in the conversation already.
      mention(ch, {
        type: 19,
        content: `<@${BOT_ID}> why?`,
        referenced_message: {
          id: nextId(),
          type: 0,
          author: { id: BOT_ID, bot: true },
          content: 'x',
        },
      });
      await discord.waitFor(() => posts(ch).length === 3);
      expect(String(posts(ch)[2]!.body!.content)).toMatch(/^asked: why\?$/m);
      expect(String(posts(ch)[2]!.body!.content)).not.toContain('The message (from');
    } finally {
      await stop();
    }
  });

  it('replays a real reply that mentions Spool: its words, then the message it replies to with its image named', async () => {
    const stop = await startAdapter(false);
    try {
      const ch = String(REPLY.payload.channel_id);
      discord.dispatchMessage(REPLY.payload);
      await discord.waitFor(() => posts(ch).length === 1);
      expect(posts(ch)[0]!.body).toMatchObject({
        content: `answer to: ${REPLY.words.join('\n\n')}`,
        message_reference: { message_id: REPLY.payload.id },
      });
    } finally {
      await stop();
    }
  });

  it('runs an edited mention again, its answer replaced in place; an update that is no edit (an embed) changes nothing', async () => {
    const stop = await startAdapter(false);
    try {
      const ch = nextId();
      const id = mention(ch);
      await discord.waitFor(() => posts(ch).length === 1);
      const rows = () =>
        db.prisma.inboxEntry.findMany({
          where: { platform: 'discord', lane: { channel: ch } },
          orderBy: { id: 'asc' },
        });
      await expect.poll(async () => (await rows()).map((r) => r.status)).toEqual(['answered']);
      const message = { ...FIXTURE.payload, id, channel_id: ch };
      // Discord unfurls a link: an update with no edit in it.
      discord.dispatchMessageChange('MESSAGE_UPDATE', {
        ...message,
        embeds: [{ type: 'link', url: 'https://x.y' }],
      });
      const editedAt = '2026-11-28T12:00:00.000000+00:00';
      discord.dispatchMessageChange('MESSAGE_UPDATE', {
        ...message,
        content: `<@${BOT_ID}> Test again`,
        edited_timestamp: editedAt,
      });
      const patches = () =>
        discord.calls.filter(
          (c) => c.method === 'PATCH' && c.path.startsWith(`/channels/${ch}/messages/`),
        );
      await discord.waitFor(() => patches().length === 1);
      expect(patches()[0]!.body).toMatchObject({ content: 'answer to: Test again' });
      expect(posts(ch)).toHaveLength(1);
      await expect
        .poll(async () => (await rows()).map((r) => [r.messageKey, r.text, r.status]))
        .toEqual([
          [`message:${id}`, 'Test', 'answered'],
          [`message:${id}:edited:${editedAt}`, 'Test again', 'answered'],
        ]);
      // The same edit delivered again (another shard's copy, a resume): followed once.
      discord.dispatchMessageChange('MESSAGE_UPDATE', {
        ...message,
        content: `<@${BOT_ID}> Test again`,
        edited_timestamp: editedAt,
      });
      const later = mention(ch, { content: `<@${BOT_ID}> next` });
      await discord.waitFor(() => posts(ch).length === 2);
      expect(posts(ch)[1]!.body).toMatchObject({ message_reference: { message_id: later } });
      expect(patches()).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('ends the turn of a mention deleted before it is answered, with nothing posted, one by one or in bulk', async () => {
    // The model answers no sooner than a minute, and may take two: each question is still at the
    // model when it is deleted, however busy the machine.
    const stop = await startAdapter(false, 120_000);
    try {
      const ch = nextId();
      const rows = () =>
        db.prisma.inboxEntry.findMany({
          where: { platform: 'discord', lane: { channel: ch } },
          orderBy: { id: 'asc' },
        });
      llm.latencyMs = 60_000;
      const asked = llm.requests.length;
      const deleted = mention(ch);
      await expect.poll(() => llm.requests.length).toBe(asked + 1);
      discord.dispatchMessageChange('MESSAGE_DELETE', {
        id: deleted,
        channel_id: ch,
        guild_id: FIXTURE.payload.guild_id,
      });
      await expect
        .poll(async () => (await rows()).map((r) => [r.status, r.superseded]))
        .toEqual([['answered', true]]);
      const purged = mention(ch, { content: `<@${BOT_ID}> second` });
      await expect.poll(() => llm.requests.length).toBe(asked + 2);
      discord.dispatchMessageChange('MESSAGE_DELETE_BULK', {
        ids: [nextId(), purged],
        channel_id: ch,
        guild_id: FIXTURE.payload.guild_id,
      });
      await expect
        .poll(async () => (await rows()).map((r) => [r.status, r.superseded]))
        .toEqual([
          ['answered', true],
          ['answered', true],
        ]);
      llm.latencyMs = 0;
      const kept = mention(ch, { content: `<@${BOT_ID}> third` });
      await discord.waitFor(() => posts(ch).length === 1);
      expect(posts(ch)[0]!.body).toMatchObject({
        content: 'answer to: third',
        message_reference: { message_id: kept },
      });
    } finally {
      llm.latencyMs = 0;
      await stop();
    }
  });
});
