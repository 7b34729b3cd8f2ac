import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DISCORD_COMMANDS,
  DISCORD_REFUSAL,
  unreadableReply,
  type DiscordAdapterConfig,
} from '../../../src/adapters/discord/discord-adapter.ts';
import {
  fileRefusedNote,
  NOT_RECORDED_REPLY,
  type DeliveryEngine,
  type DeliveryOptions,
} from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { testAgent, testTool } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { GUILD, startDiscordAdapter } from '../../support/discord-spool.ts';
import { APP_ID, FakeDiscord, nextId, type DiscordCall } from '../../support/fake-discord.ts';
import { FakeOpenAi, lastUserText, userTexts } from '../../support/fake-openai.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { until } from '../../support/process.ts';
import { ProxyAgent } from 'undici';

const OTHER_GUILD = '400000000000000002';

let db: Database;
let llm: FakeOpenAi;
let discord: FakeDiscord;
let adapter: Started;

const ticket = testTool('ticket', (args) => ({
  content: `ticket ${String(args.id)}: printer on floor 3 jammed`,
  isError: false,
}));
/** A result far longer than ten Discord messages. */
const LOG = Array.from(
  { length: 2_000 },
  (_, i) => `entry ${String(i).padStart(4, '0')}: disk sweep ok`,
).join('\n');
const sweepLog = testTool('sweep_log', () => ({ content: LOG, isError: false }));
/** Discord's answer to a file it will never take. */
const TOO_LARGE = { status: 413, code: 40005, message: 'Request entity too large' };

interface Started {
  pipeline: DeliveryEngine;
  stop(): Promise<void>;
}

async function startAdapter(
  overrides: Partial<DiscordAdapterConfig> = {},
  log = new RecordingLogger(),
  database = db,
  pipelineOptions: Partial<DeliveryOptions> = {},
): Promise<Started> {
  const pipeline = testEngine(
    database,
    testAgent({ fake: llm, store: testStore(database), tools: [ticket, sweepLog] }),
    pipelineOptions,
  );
  const { stop } = await startDiscordAdapter(
    pipeline,
    { apiUrl: discord.apiUrl, allowedGuilds: [GUILD], ...overrides },
    log,
  );
  return { pipeline, stop };
}

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  discord = await new FakeDiscord().start();
  adapter = await startAdapter();
});
afterAll(async () => {
  await adapter.stop();
  await discord.stop();
  await llm.stop();
  await db.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.fallback = undefined;
  discord.calls.length = 0;
});

/**
 * For a describe whose adapter differs from the shared one: the shared one is stopped meanwhile.
 * Engines on one database are replicas, and any replica works a lane with a message due and no
 * lease: the shared engine's poll took the lane of a message the other adapter had recorded but
 * not yet handed to its own lanes (it was sending the deferral), and answered it without the
 * other's policy (the approval prompt never came, 1 run in 3 on a busy machine).
 */
function withoutSharedAdapter(): void {
  beforeAll(() => adapter.stop());
  afterAll(async () => {
    adapter = await startAdapter();
  });
}

const channel = () => nextId();
const forToken = (token: string) => (c: DiscordCall) => c.path.includes(`/${token}`);
const edits = (token: string) => discord.answersTo(token);
const followUps = (token: string) =>
  discord.callsTo('POST', /^\/webhooks\/\d+\/[^/]+$/).filter(forToken(token));
const callbacks = (token: string) => discord.callbacksOf(token);
const ask = (
  channelId: string,
  prompt: string,
  extra: Partial<Parameters<FakeDiscord['sendCommand']>[0]> = {},
) =>
  discord.sendCommand({
    name: 'ask',
    options: [{ name: 'prompt', value: prompt }],
    guildId: GUILD,
    channelId,
    ...extra,
  });

describe('startup', () => {
  it('registers the commands in the guild once, and not again when unchanged', async () => {
    expect(discord.commands.map((c) => c.name).sort()).toEqual([
      'ask',
      'help',
      'login',
      'logins',
      'logout',
      'new',
      'prompt',
      'recall',
      'result',
      'schedule',
      'usage',
    ]);
    discord.calls.length = 0;
    const log = new RecordingLogger();
    const again = await startAdapter({}, log);
    await again.stop();
    expect(discord.callsTo('GET', /\/guilds\/\d+\/commands$/)).toHaveLength(1);
    expect(discord.callsTo('PUT', /commands$/)).toHaveLength(0);
    const invite = log
      .messages()
      .find((m) => m.includes('Invite: https://discord.com/oauth2/authorize?client_id=' + APP_ID))!;
    // View Channel (private channels), Send Messages, Send Messages in Threads: for replies posted
    // to the channel; Create Public Threads: for scheduled runs; Read Message History: for the
    // message a reaction is on.
    expect(BigInt(/permissions=(\d+)/.exec(invite)![1]!)).toBe(
      (1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 35n) | (1n << 16n),
    );
  });

  it('re-registers when a definition changed', async () => {
    discord.commands = discord.commands.map((c) =>
      c.name === 'ask' ? { ...c, description: 'old text' } : c,
    );
    const again = await startAdapter();
    await again.stop();
    expect(discord.callsTo('PUT', /\/guilds\/\d+\/commands$/)).toHaveLength(1);
    expect(discord.commands.find((c) => c.name === 'ask')!.description).toBe(
      DISCORD_COMMANDS[0]!.description,
    );
  });
});

describe('/ask', () => {
  it('defers, then edits the original response with the reply, pinging nobody', async () => {
    llm.enqueue({ content: 'Hello @everyone and <@&123>!' });
    const { token } = ask(channel(), 'hi');
    await discord.waitFor(() => edits(token).length === 1);
    expect(callbacks(token)[0]!.body).toMatchObject({ type: 5 });
    expect(edits(token)[0]!.body).toMatchObject({
      content: 'Hello @everyone and <@&123>!',
      allowed_mentions: { parse: [] },
    });
    expect(discord.calls.indexOf(callbacks(token)[0]!)).toBeLessThan(
      discord.calls.indexOf(edits(token)[0]!),
    );
  });

  it("reads a file attached to /ask from Discord's CDN, with the bot's token never sent along", async () => {
    llm.fallback = (request) => ({
      content: `shown: ${request.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' | ')}`,
    });
    const csv = Buffer.from('region,units\nnorth,42\nsouth,17\n');
    const { token } = ask(channel(), 'which region sold more?', {
      attachment: { filename: 'sales.csv', contentType: 'text/csv', bytes: csv },
    });
    await discord.waitFor(() => edits(token).length === 1);
    expect(edits(token)[0]!.body).toMatchObject({ content: `shown: ${csv.toString()}` });
    expect(userTexts(llm.requests[0]!)).toEqual(['which region sold more?']);
    expect(discord.downloads).toEqual([
      { path: expect.stringMatching(/\/sales\.csv$/), authorization: undefined },
    ]);
  });

  it('continues the conversation on a second /ask in the same channel, not in another', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `seen ${userTexts(request).length}` });
    const first = ask(ch, 'first');
    await discord.waitFor(() => edits(first.token).length === 1);
    const second = ask(ch, 'second');
    await discord.waitFor(() => edits(second.token).length === 1);
    const elsewhere = ask(channel(), 'elsewhere');
    await discord.waitFor(() => edits(elsewhere.token).length === 1);
    expect([first, second, elsewhere].map((i) => edits(i.token)[0]!.body!.content)).toEqual([
      'seen 1',
      'seen 2',
      'seen 1',
    ]);
  });

  it('sends a 5,000-char reply as the original plus ordered follow-ups with intact code blocks', async () => {
    const code = [
      '```py',
      ...Array.from(
        { length: 120 },
        (_, i) => `print("line ${String(i).padStart(3, '0')}")  # ${'-'.repeat(24)}`,
      ),
      '```',
    ].join('\n');
    const reply = `Here you go:\n\n${code}\n\nDone.`;
    expect(reply.length).toBeGreaterThan(5_000);
    llm.enqueue({ content: reply });
    const { token } = ask(channel(), 'long please');
    await discord.waitFor(() =>
      followUps(token).some((c) => String(c.body!.content).includes('Done.')),
    );
    const parts = [edits(token)[0]!, ...followUps(token)].map((c) => String(c.body!.content));
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2_000);
      expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    }
    const lines = parts.join('\n').match(/line \d{3}/g)!;
    expect(lines).toEqual(
      Array.from({ length: 120 }, (_, i) => `line ${String(i).padStart(3, '0')}`),
    );
    expect(
      followUps(token).every(
        (c) => (c.body!.allowed_mentions as { parse: string[] }).parse.length === 0,
      ),
    ).toBe(true);
  });

  it('sends a 20,000-char reply as the original response with the reply attached, and no follow-ups', async () => {
    const long = Array.from({ length: 1_000 }, (_, i) => `line ${i}: ${'words '.repeat(3)}`)
      .join('\n')
      .slice(0, 20_000);
    llm.enqueue({ content: long });
    const { token } = ask(channel(), 'everything');
    await discord.waitFor(() => edits(token).length === 1);
    const [edit] = edits(token);
    expect(edit!.body).toMatchObject({
      content: expect.stringMatching(
        /^The reply is 20,000 characters long, so here it is as a file, reply-\d+\.md\.$/,
      ),
      attachments: [{ id: 0 }],
    });
    expect(edit!.files!.map(({ name, content }) => ({ name, content }))).toEqual([
      { name: expect.stringMatching(/^reply-\d+\.md$/), content: long },
    ]);
    expect(followUps(token)).toEqual([]);
  });

  it('answers two /ask at once in one channel in order', async () => {
    const ch = channel();
    llm.fallback = (request) => ({
      content: `answer to ${userTexts(request).at(-1)} after ${userTexts(request).length - 1} earlier`,
    });
    const a = ask(ch, 'alpha');
    const b = ask(ch, 'beta');
    await discord.waitFor(() => edits(a.token).length === 1 && edits(b.token).length === 1);
    expect(edits(a.token)[0]!.body!.content).toBe('answer to alpha after 0 earlier');
    expect(edits(b.token)[0]!.body!.content).toBe('answer to beta after 1 earlier');
    // Both were deferred before either was answered.
    expect(discord.calls.indexOf(callbacks(b.token)[0]!)).toBeLessThan(
      discord.calls.indexOf(edits(a.token)[0]!),
    );
  });

  it('answers a redelivered interaction once', async () => {
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
    const id = nextId();
    const ch = channel();
    ask(ch, 'hello', { id, token: `token-${id}` });
    ask(ch, 'hello', { id, token: `token-${id}` });
    // One more /ask in the channel: a second answer to the first would come before this one's.
    const next = ask(ch, 'next');
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(callbacks(`token-${id}`)).toHaveLength(1);
    expect(edits(`token-${id}`).map((c) => c.body!.content)).toEqual(['answer to hello']);
    expect(llm.requests.map(userTexts)).toEqual([['hello'], ['hello', 'next']]);
  });

  it('refuses a guild that is not allowed, privately, without calling the model', async () => {
    const { token } = ask(channel(), 'hi', { guildId: OTHER_GUILD });
    await discord.waitFor(() => callbacks(token).length === 1);
    expect(callbacks(token)[0]!.body).toMatchObject({
      type: 4,
      data: { content: DISCORD_REFUSAL, flags: 64 },
    });
    expect(llm.requests).toEqual([]);
  });

  it('refuses /recall and /new in a guild that is not allowed', async () => {
    const recall = discord.sendCommand({
      name: 'recall',
      options: [{ name: 'query', value: 'printer' }],
      guildId: OTHER_GUILD,
      channelId: channel(),
    });
    const fresh = discord.sendCommand({ name: 'new', guildId: OTHER_GUILD, channelId: channel() });
    await discord.waitFor(
      () => callbacks(recall.token).length === 1 && callbacks(fresh.token).length === 1,
    );
    for (const { token } of [recall, fresh])
      expect(callbacks(token)[0]!.body).toMatchObject({
        type: 4,
        data: { content: DISCORD_REFUSAL, flags: 64 },
      });
  });

  it('tells the user when the model fails, and the next /ask works', async () => {
    const ch = channel();
    llm.enqueue({ status: 503, message: 'overloaded', type: 'server_error' });
    const failed = ask(ch, 'hi');
    await discord.waitFor(() => edits(failed.token).length === 1);
    expect(edits(failed.token)[0]!.body!.content).toBe(
      'Sorry, the language model request failed: the model endpoint had a server error (503). Please try again.',
    );
    llm.enqueue({ content: 'recovered' });
    const next = ask(ch, 'again');
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(edits(next.token)[0]!.body!.content).toBe('recovered');
  });

  it('posts to the channel when the interaction token expired before the reply was ready', async () => {
    const ch = channel();
    const id = nextId();
    discord.expiredTokens.add(`token-${id}`);
    llm.enqueue({ content: 'late but here' });
    ask(ch, 'slow question', { id, token: `token-${id}` });
    const posts = () => discord.callsTo('POST', new RegExp(`^/channels/${ch}/messages$`));
    await discord.waitFor(() => posts().length === 2);
    expect(callbacks(`token-${id}`)).toHaveLength(1);
    expect(posts().map((c) => c.body!.content)).toEqual([
      expect.stringContaining('took longer than Discord waits'),
      'late but here',
    ]);
    // Each carries a nonce of its own that Discord enforces: posted again after a crash, it is not
    // doubled.
    expect(posts().map((c) => c.body!.enforce_nonce)).toEqual([true, true]);
    const nonces = posts().map((c) => String(c.body!.nonce));
    expect(new Set(nonces).size).toBe(2);
    for (const nonce of nonces) expect(nonce).toMatch(/^[\w-]{25}$/);
    // Discord has the post once the fake records it; Spool records it once Discord's answer is
    // back, a moment later.
    const recorded = await until(
      async () =>
        (await db.prisma.outboxChunk.findFirst({ where: { inbox: { messageKey: id } } }))
          ?.platformMessageId ?? undefined,
    );
    expect(recorded).toBeTruthy();
  });
});

describe('interactions in shapes discord.js does not expect', () => {
  beforeEach(() => {
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
  });

  it("answers an /ask without entitlements (the shape of Discord's own documented example), and the gateway serves the next", async () => {
    const ch = channel();
    const bare = ask(ch, 'no entitlements here', {
      omit: ['entitlements', 'authorizing_integration_owners', 'application_id'],
    });
    const next = ask(ch, 'next');
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(callbacks(bare.token).map((c) => c.body)).toEqual([
      expect.objectContaining({ type: 5 }),
    ]);
    expect(edits(bare.token).map((c) => c.body!.content)).toEqual([
      'answer to no entitlements here',
    ]);
    expect(edits(next.token)[0]!.body!.content).toBe('answer to next');
  });

  it('logs an event discord.js cannot handle at all, and keeps the connection serving', async () => {
    const recorded = new RecordingLogger();
    const started = await startAdapter({}, recorded);
    try {
      const nobody = ask(channel(), 'from nobody', { omit: ['member', 'user'] });
      const next = ask(channel(), 'still there?');
      await discord.waitFor(() => edits(next.token).length === 1);
      expect(edits(next.token)[0]!.body!.content).toBe('answer to still there?');
      expect(recorded.lines).toContainEqual(
        expect.objectContaining({
          level: 'error',
          fields: expect.objectContaining({ event: 'INTERACTION_CREATE' }),
        }),
      );
      expect(callbacks(nobody.token)).toEqual([]);
      expect(await db.prisma.inboxEntry.count({ where: { messageKey: nobody.id } })).toBe(0);
    } finally {
      await started.stop();
    }
  });

  it('answers an /ask with channel_id but no channel object in its channel, once however often it is delivered', async () => {
    const ch = channel();
    const id = nextId();
    ask(ch, 'hello', { id, token: `token-${id}`, omit: ['channel'] });
    ask(ch, 'hello', { id, token: `token-${id}`, omit: ['channel'] });
    // The next /ask in the channel: its conversation holds the first when the first joined the
    // channel's lane.
    const next = ask(ch, 'next');
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(callbacks(`token-${id}`).map((c) => c.body)).toEqual([
      expect.objectContaining({ type: 5 }),
    ]);
    expect(edits(`token-${id}`).map((c) => c.body!.content)).toEqual(['answer to hello']);
    expect(llm.requests.map(userTexts)).toEqual([['hello'], ['hello', 'next']]);
    expect(
      await db.prisma.inboxEntry.findFirstOrThrow({
        where: { messageKey: id },
        include: { lane: true },
      }),
    ).toMatchObject({ status: 'answered', lane: { channel: ch } });
  });

  it('tells the sender privately what was wrong with an /ask that can never be stored, and stores nothing', async () => {
    const lost = ask(channel(), 'where am I?', { omit: ['channel', 'channel_id'] });
    await discord.waitFor(() => callbacks(lost.token).length === 1);
    expect(callbacks(lost.token)[0]!.body).toMatchObject({
      type: 4,
      data: { content: unreadableReply(['no channel']), flags: 64 },
    });
    expect(await db.prisma.inboxEntry.count({ where: { messageKey: lost.id } })).toBe(0);
    expect(llm.requests).toEqual([]);
  });
});

describe('a file Discord refuses', () => {
  afterEach(() => {
    discord.refuse = undefined;
  });

  it('posts a 20,000-char reply as messages when Discord will not take its file, saying why', async () => {
    const long = Array.from({ length: 1_000 }, (_, i) => `line ${i}: ${'words '.repeat(3)}`)
      .join('\n')
      .slice(0, 20_000);
    discord.refuse = (call) => (call.files?.length ? TOO_LARGE : undefined);
    llm.enqueue({ content: long });
    const { id, token } = ask(channel(), 'everything');
    const note = fileRefusedNote(TOO_LARGE.message);
    await discord.waitFor(() =>
      followUps(token).some((c) => String(c.body!.content).includes(note)),
    );
    expect(discord.refusedCalls.filter(forToken(token)).map((c) => c.files?.length)).toEqual([1]);
    // The start of the reply replaces the deferral ("thinking…"), as any reply's does; the rest
    // follows.
    expect(edits(token)).toHaveLength(1);
    const parts = [...edits(token), ...followUps(token)].map((c) => String(c.body!.content));
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2_000);
    expect(parts.join('\n')).toContain(long.split('\n').at(-1));
    expect(parts.join('\n').match(/^line \d+/gm)).toEqual(long.match(/^line \d+/gm));
    // The note can reach Discord before the engine marks the entry answered: wait on the row.
    const entry = await until(() =>
      db.prisma.inboxEntry
        .findFirstOrThrow({ where: { messageKey: id }, include: { outbox: true } })
        .then((row) => (row.status === 'answered' ? row : undefined)),
    );
    expect(entry.outbox.every((chunk) => chunk.platformMessageId)).toBe(true);
  });

  it('/result sends the result as at most 10 private messages when Discord will not take the file, saying why and how much is left out', async () => {
    const ch = channel();
    llm.enqueue(
      { toolCalls: [{ id: 'call_log', name: 'sweep_log', arguments: '{}' }] },
      { content: 'The sweep is logged.' },
    );
    const asked = ask(ch, 'run the disk sweep');
    await discord.waitFor(() => edits(asked.token).length === 1);
    const found = discord.sendCommand({
      name: 'recall',
      options: [{ name: 'query', value: 'disk sweep' }],
      guildId: GUILD,
      channelId: ch,
    });
    await discord.waitFor(() => edits(found.token).length === 1);
    const id = /TOOL RESULT sweep_log tool_call_id="(call_[0-9a-f]{32})"/.exec(
      String(edits(found.token)[0]!.body!.content),
    )![1]!;

    discord.refuse = (call) =>
      /\/callback$/.test(call.path) && call.files?.length ? TOO_LARGE : undefined;
    const result = discord.sendCommand({
      name: 'result',
      options: [{ name: 'id', value: id }],
      guildId: GUILD,
      channelId: ch,
    });
    await discord.waitFor(
      () => callbacks(result.token).length === 1 && followUps(result.token).length === 9,
    );
    // One more command here: anything more for /result would have come before its answer.
    const after = discord.sendCommand({ name: 'help', guildId: GUILD, channelId: ch });
    await discord.waitFor(() => callbacks(after.token).length === 1);

    expect(
      discord.refusedCalls.filter(forToken(result.token)).map((c) => c.files?.[0]?.name),
    ).toEqual([`${id}.txt`]);
    const [header] = callbacks(result.token);
    expect(header!.body).toMatchObject({ type: 4, data: { flags: 64 } });
    const shown = followUps(result.token).map((c) => String(c.body!.content));
    expect(followUps(result.token)).toHaveLength(9);
    for (const call of followUps(result.token)) expect(call.body).toMatchObject({ flags: 64 });
    for (const part of [
      header!.body!.data as { content: string },
      ...shown.map((content) => ({ content })),
    ])
      expect(part.content.length).toBeLessThanOrEqual(2_000);
    expect(LOG.startsWith(shown.join('\n'))).toBe(true);
    const headerText = (header!.body!.data as { content: string }).content;
    expect(headerText).toContain(TOO_LARGE.message);
    expect(headerText).toContain((LOG.length - shown.join('').length).toLocaleString('en-US'));
  });
});

describe('Discord refusing calls while replies are posted', () => {
  it.each([
    ['429, rate limited', 429],
    ['502', 502],
  ])(
    'every third reply edit refused (%s): each reply is delayed, and posted exactly once',
    async (_, status) => {
      let calls = 0;
      discord.refuse = (call) =>
        call.method === 'PATCH' && /@original$/.test(call.path) && ++calls % 3 === 0
          ? status
          : undefined;
      llm.fallback = (request) => ({
        content: `answer to ${lastUserText(request)}`,
      });
      try {
        const asked = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({
          name,
          ...ask(channel(), `storm ${name}`),
        }));
        await discord.waitFor(() => asked.every(({ token }) => edits(token).length > 0), 60_000);
        for (const { name, token } of asked)
          expect(edits(token).map((c) => c.body!.content)).toEqual([`answer to storm ${name}`]);
        expect(discord.refusedCalls.length).toBeGreaterThan(0);
      } finally {
        discord.refuse = undefined;
        llm.fallback = undefined;
      }
    },
  );
});

describe('a database outage', () => {
  it('tells the user privately that the message was not taken and to send it again (Discord does not resend)', async () => {
    const broken = await testDatabase();
    const outage = await startAdapter({}, new RecordingLogger(), broken);
    await broken.close();
    try {
      const { token } = ask(channel(), 'hi');
      await discord.waitFor(() => callbacks(token).length === 1);
      expect(callbacks(token)[0]!.body).toMatchObject({
        type: 4,
        data: { content: NOT_RECORDED_REPLY, flags: 64 },
      });
    } finally {
      await outage.stop();
    }
  });
});

describe('/usage', () => {
  it('shows a person their own tokens today, ephemerally, with the last 30 days as a chart', async () => {
    const ch = channel();
    const user = `U${Math.random().toString(36).slice(2, 10)}`;
    llm.enqueue({ content: 'Counted.' });
    const asked = ask(ch, 'count my usage', { userId: user });
    await discord.waitFor(() => edits(asked.token).length === 1);
    const served = llm.served.filter((s) =>
      s.request.messages.some((m) => m.content === 'count my usage'),
    );
    expect(served).toHaveLength(1);

    const shown = discord.sendCommand({
      name: 'usage',
      guildId: GUILD,
      channelId: ch,
      userId: user,
    });
    await discord.waitFor(() => edits(shown.token).length === 1);
    expect(callbacks(shown.token)[0]!.body).toMatchObject({ type: 5, data: { flags: 64 } });
    const [reply] = edits(shown.token);
    const text = String(reply!.body!.content);
    expect(text).toContain('*Your usage here*');
    expect(text).toContain(`Today: ${served[0]!.usage.total_tokens} tokens`);
    expect(text).toContain(`• <#${ch}>: ${served[0]!.usage.total_tokens} tokens`);
    expect(reply!.body!.allowed_mentions).toEqual({ parse: [] });
    const [chart] = reply!.files!;
    expect(chart!.name).toBe('usage.png');
    // A PNG of the chart's size: the signature, then the IHDR chunk's width and height.
    expect(chart!.bytes.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect([chart!.bytes.readUInt32BE(16), chart!.bytes.readUInt32BE(20)]).toEqual([800, 360]);
  });

  it('sends the report as text when Discord refuses the chart (a 413 with an HTML page), saying what Discord answered', async () => {
    const ch = channel();
    const page =
      '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n';
    discord.refuse = (call) =>
      call.method === 'PATCH' && call.files?.length
        ? { status: 413, code: 0, message: '', page }
        : undefined;
    try {
      const shown = discord.sendCommand({ name: 'usage', guildId: GUILD, channelId: ch });
      await discord.waitFor(() => edits(shown.token).length === 1);
      const [reply] = edits(shown.token);
      expect(reply!.files ?? []).toEqual([]);
      const text = String(reply!.body!.content);
      expect(text).toContain('*Your usage here*');
      expect(text).toContain(
        '_(I could not attach the chart (HTTP 413: 413 Request Entity Too Large), so here is the report without it.)_',
      );
      expect(text).not.toContain('try again');
      expect(
        discord.refusedCalls.filter((c) => c.path.includes(shown.token) && c.files?.length),
      ).toHaveLength(1);
    } finally {
      discord.refuse = undefined;
    }
  });
});

describe('/recall, /new and /help', () => {
  it('finds an earlier tool run in the channel, ephemerally, and nothing from another guild', async () => {
    const ch = channel();
    llm.enqueue(
      { toolCalls: [{ id: 'call_ticket', name: 'ticket', arguments: '{"id":"T-9"}' }] },
      { content: 'The printer is jammed.' },
    );
    const asked = ask(ch, 'what is ticket T-9?');
    await discord.waitFor(() => edits(asked.token).length === 1);

    const found = discord.sendCommand({
      name: 'recall',
      options: [{ name: 'query', value: 'printer jammed' }],
      guildId: GUILD,
      channelId: ch,
    });
    await discord.waitFor(() => edits(found.token).length === 1);
    expect(callbacks(found.token)[0]!.body).toMatchObject({ type: 5, data: { flags: 64 } });
    expect(edits(found.token)[0]!.body!.content).toMatch(
      /TOOL RESULT ticket tool_call_id="call_[0-9a-f]{32}"/,
    );

    // /result sends the whole result as a file only the asker sees.
    const id = /tool_call_id="(call_[0-9a-f]{32})"/.exec(
      String(edits(found.token)[0]!.body!.content),
    )![1]!;
    const result = discord.sendCommand({
      name: 'result',
      options: [{ name: 'id', value: id }],
      guildId: GUILD,
      channelId: ch,
    });
    await discord.waitFor(() => callbacks(result.token).length === 1);
    const [reply] = callbacks(result.token);
    expect(reply!.body).toMatchObject({
      type: 4,
      data: { flags: 64, content: `The full result of ticket (${id}): 37 characters.` },
    });
    expect(reply!.files!.map(({ name, content }) => ({ name, content }))).toEqual([
      { name: `${id}.txt`, content: 'ticket T-9: printer on floor 3 jammed' },
    ]);

    const other = await startAdapter({ allowedGuilds: undefined });
    try {
      const elsewhere = discord.sendCommand({
        name: 'recall',
        options: [{ name: 'query', value: 'printer jammed' }],
        guildId: OTHER_GUILD,
        channelId: ch,
      });
      await discord.waitFor(() => edits(elsewhere.token).length >= 1);
      expect(edits(elsewhere.token)[0]!.body!.content).toBe(
        'No earlier messages or tool runs in this channel match "printer jammed".',
      );
    } finally {
      await other.stop();
    }
  });

  it('/new starts a fresh conversation; the old one stays searchable', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `seen ${userTexts(request).join(' | ')}` });
    const before = ask(ch, 'remember the magenta llama');
    await discord.waitFor(() => edits(before.token).length === 1);
    const fresh = discord.sendCommand({ name: 'new', guildId: GUILD, channelId: ch });
    await discord.waitFor(() => edits(fresh.token).length === 1);
    const after = ask(ch, 'what do you remember?');
    await discord.waitFor(() => edits(after.token).length === 1);
    expect(edits(after.token)[0]!.body!.content).toBe('seen what do you remember?');
    const recall = discord.sendCommand({
      name: 'recall',
      options: [{ name: 'query', value: 'magenta llama' }],
      guildId: GUILD,
      channelId: ch,
    });
    await discord.waitFor(() => edits(recall.token).length === 1);
    expect(edits(recall.token)[0]!.body!.content).toContain('USER');
  });

  it('never posts private /recall results to the channel, even when the token expired', async () => {
    const ch = channel();
    const id = nextId();
    discord.expiredTokens.add(`token-${id}`);
    discord.sendCommand({
      name: 'recall',
      options: [{ name: 'query', value: 'anything' }],
      guildId: GUILD,
      channelId: ch,
      id,
      token: `token-${id}`,
    });
    await discord.waitFor(() => edits(`token-${id}`).length >= 1);
    // Whatever the adapter does after the failed edit, it does before answering the next command
    // here.
    llm.enqueue({ content: 'still here' });
    const next = ask(ch, 'are you there?');
    await discord.waitFor(() => edits(next.token).length === 1);
    expect(discord.callsTo('POST', new RegExp(`^/channels/${ch}/messages$`))).toEqual([]);
  });

  it('/help answers ephemerally', async () => {
    const { token } = discord.sendCommand({ name: 'help', guildId: GUILD, channelId: channel() });
    await discord.waitFor(() => callbacks(token).length === 1);
    expect(callbacks(token)[0]!.body).toMatchObject({
      type: 4,
      data: { flags: 64, content: expect.stringContaining('/ask prompt:<text>') },
    });
  });
});

describe('Discord through a proxy (HTTPS_PROXY / HTTP_PROXY)', () => {
  withoutSharedAdapter();

  it('sends REST calls through it: command registration, the deferral and the reply', async () => {
    const proxy = await startConnectProxy();
    const started = await startAdapter({ dispatcher: new ProxyAgent(proxy.url) });
    try {
      llm.enqueue({ content: 'proxied answer' });
      const { token } = ask(channel(), 'through the proxy?');
      await discord.waitFor(() =>
        edits(token).some((c) => (c.body as { content?: string }).content === 'proxied answer'),
      );
      expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(discord.apiUrl).host]));
    } finally {
      await started.stop();
      proxy.stop();
    }
  });
});

describe('approvals with Discord buttons', () => {
  withoutSharedAdapter();
  const APPROVER = '300000000000000009';
  const policy = {
    rules: [{ match: { platform: 'discord' }, approve: ['ticket'], approvers: [APPROVER] }],
  };

  it("posts Approve and Deny as components, answers a non-approver's click privately, and runs the tool once an approver clicks", async () => {
    const started = await startAdapter({}, new RecordingLogger(), db, { policy });
    try {
      llm.fallback = (request) =>
        request.messages.at(-1)!.role === 'user'
          ? { toolCalls: [{ id: 't', name: 'ticket', arguments: '{"id":7}' }] }
          : { content: `tool said: ${request.messages.at(-1)!.content}` };
      const before = ticket.calls.length;
      const ch = channel();
      const { token } = ask(ch, 'what is ticket 7?');
      const prompts = () => followUps(token).filter((c) => Array.isArray(c.body?.components));
      await discord.waitFor(() => prompts().length === 1);
      // The deferred response says it waits, so that the prompt is a message of its own.
      expect(edits(token)[0]!.body).toMatchObject({ content: 'Waiting for an approver…' });
      const buttons = (
        prompts()[0]!.body!.components as Array<{
          components: Array<{ custom_id: string; label: string }>;
        }>
      )[0]!.components;
      expect(buttons.map((b) => b.label)).toEqual(['Approve', 'Deny']);
      expect(prompts()[0]!.body!.content).toContain('`ticket`');
      const messageId = nextId();
      const stranger = discord.clickButton({
        customId: buttons[0]!.custom_id,
        messageId,
        guildId: GUILD,
        channelId: ch,
      });
      await discord.waitFor(() => callbacks(stranger.token).length === 1);
      expect(callbacks(stranger.token)[0]!.body).toMatchObject({
        type: 4,
        data: { content: 'You are not allowed to approve this call.', flags: 64 },
      });
      expect(ticket.calls.length).toBe(before);
      const approver = discord.clickButton({
        customId: buttons[0]!.custom_id,
        messageId,
        guildId: GUILD,
        channelId: ch,
        userId: APPROVER,
      });
      await discord.waitFor(() =>
        edits(token).some((e) => String(e.body?.content).startsWith('tool said')),
      );
      expect(callbacks(approver.token)[0]!.body).toMatchObject({ type: 6 });
      expect(edits(token).at(-1)!.body).toMatchObject({
        content: 'tool said: ticket 7: printer on floor 3 jammed',
      });
      expect(ticket.calls.length - before).toBe(1);
      const promptEdit = discord.callsTo('PATCH', new RegExp(`/${token}/messages/\\d+$`));
      expect(promptEdit).toHaveLength(1);
      expect(promptEdit[0]!.body).toMatchObject({
        content: expect.stringMatching(new RegExp(`^✅ Approved by <@${APPROVER}> at `)),
        components: [],
      });
    } finally {
      await started.stop();
    }
  });
});

describe('links to whole results with Discord link buttons', () => {
  withoutSharedAdapter();
  const page = (toolCallId: string) => `https://spool.test/web/results/${toolCallId}`;

  it('puts a "View the whole result" link button, in a row above 👍 and 👎, on a reply whose turn read a result as a preview', async () => {
    const started = await startAdapter({}, new RecordingLogger(), db, { resultPage: page });
    try {
      llm.fallback = (request) =>
        request.messages.at(-1)!.role === 'user'
          ? { toolCalls: [{ id: 's', name: 'sweep_log', arguments: '{}' }] }
          : { content: 'swept' };
      const ch = channel();
      const { token } = ask(ch, 'sweep the disks');
      await discord.waitFor(() => edits(token).some((e) => e.body?.content === 'swept'));
      const answer = edits(token).find((e) => e.body?.content === 'swept')!;
      const [call] = await db.prisma.toolCall.findMany({
        where: { toolName: 'sweep_log', channelKey: { contains: ch } },
      });
      expect(llm.requests.at(-1)!.messages.at(-1)!.content!.length).toBeLessThan(LOG.length);
      expect(answer.body!.components).toMatchObject([
        {
          type: 1,
          components: [
            {
              type: 2,
              style: 5,
              label: 'View the whole result',
              url: page(call!.toolCallId),
            },
          ],
        },
        { type: 1, components: [{ label: '👍' }, { label: '👎' }] },
      ]);
    } finally {
      await started.stop();
    }
  });
});

describe('feedback on answers with Discord buttons', () => {
  it('puts 👍 and 👎 under an answer; a click is stored once per person per answer, a 👎 opens a modal for its reason, and /usage shows the ratings', async () => {
    llm.fallback = () => ({ content: 'the answer' });
    const ch = channel();
    const { token } = ask(ch, 'help me');
    await discord.waitFor(() => edits(token).some((e) => e.body?.content === 'the answer'));
    const answer = edits(token).find((e) => e.body?.content === 'the answer')!;
    const buttons = (
      answer.body!.components as Array<{ components: Array<{ custom_id: string; label: string }> }>
    )[0]!.components;
    expect(buttons.map((b) => b.label)).toEqual(['👍', '👎']);
    const [inbox] = await db.prisma.inboxEntry.findMany({
      where: { platform: 'discord', lane: { channel: ch } },
    });
    expect(buttons.map((b) => b.custom_id)).toEqual([
      `spool:feedback:up:${inbox!.id}`,
      `spool:feedback:down:${inbox!.id}`,
    ]);
    const rows = () =>
      db.prisma.answerFeedback.findMany({ where: { channel: ch }, orderBy: { userId: 'asc' } });
    const click = (custom: string, userId: string) =>
      discord.clickButton({
        customId: custom,
        messageId: nextId(),
        guildId: GUILD,
        channelId: ch,
        userId,
      });
    const ALICE = '300000000000000001';
    const BOB = '300000000000000002';

    // Alice's 👍, twice: one row, and a private thanks each time.
    const first = click(buttons[0]!.custom_id, ALICE);
    const again = click(buttons[0]!.custom_id, ALICE);
    await discord.waitFor(
      () => callbacks(first.token).length === 1 && callbacks(again.token).length === 1,
    );
    expect(callbacks(again.token)[0]!.body).toMatchObject({ type: 4, data: { flags: 64 } });
    // Bob's 👎: stored at once, and a modal asks why.
    const down = click(buttons[1]!.custom_id, BOB);
    await discord.waitFor(() => callbacks(down.token).length === 1);
    expect(callbacks(down.token)[0]!.body).toMatchObject({
      type: 9,
      data: { custom_id: `spool:feedback-reason:${inbox!.id}` },
    });
    expect((await rows()).map((r) => [r.userId, r.rating, r.reason])).toEqual([
      [ALICE, 'up', null],
      [BOB, 'down', null],
    ]);
    const reason = discord.submitModal({
      customId: `spool:feedback-reason:${inbox!.id}`,
      messageId: nextId(),
      values: { reason: 'It missed the second step' },
      guildId: GUILD,
      channelId: ch,
      userId: BOB,
    });
    await discord.waitFor(() => callbacks(reason.token).length === 1);
    expect(callbacks(reason.token)[0]!.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect((await rows()).map((r) => [r.userId, r.rating, r.reason])).toEqual([
      [ALICE, 'up', null],
      [BOB, 'down', 'It missed the second step'],
    ]);
    // Alice changes her mind: still one row of hers, now a 👎.
    const changed = click(buttons[1]!.custom_id, ALICE);
    await discord.waitFor(() => callbacks(changed.token).length === 1);
    expect((await rows()).map((r) => [r.userId, r.rating])).toEqual([
      [ALICE, 'down'],
      [BOB, 'down'],
    ]);
    // /usage, for Alice who asked: the ratings of the answers to her messages.
    const usage = discord.sendCommand({
      name: 'usage',
      guildId: GUILD,
      channelId: ch,
      userId: ALICE,
    });
    await discord.waitFor(() =>
      [...callbacks(usage.token), ...edits(usage.token)].some((c) =>
        JSON.stringify(c.body).includes('Answers rated this month'),
      ),
    );
    expect(
      JSON.stringify([...callbacks(usage.token), ...edits(usage.token)].map((c) => c.body)),
    ).toContain('Answers rated this month: 👍 0 · 👎 2');
  });
});
