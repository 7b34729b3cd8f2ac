/**
 * Commands with the database gone (a PostgreSQL server of the test's own, stopped): every one is
 * answered, in time and in plain words, on Slack (through response_url, after the ack) and on
 * Discord (within its 3 s, then the deferred response), instead of an empty 200 or silence.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAdapter } from '../../src/adapters/discord/discord-adapter.ts';
import { SlackAdapter } from '../../src/adapters/slack/slack-adapter.ts';
import { DATABASE_AWAY_REPLY } from '../../src/core/delivery/commands/commands.ts';
import type { DeliveryEngine } from '../../src/core/delivery/engine/engine.ts';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { testAgent } from '../support/agent.ts';
import { testEngine, testStore } from '../support/db.ts';
import { APP_ID, FakeDiscord, nextId } from '../support/fake-discord.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { FakeSlack, signedRequest, TEAM } from '../support/fake-slack.ts';
import { silentLogger } from '../support/logger.ts';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';
import { freePort } from '../support/process.ts';
import { serveSlackEvents } from '../support/slack-bot.ts';

const SIGNING_SECRET = 'commands-signing-secret';
const GUILD = '400000000000000001';

let server: OwnPostgres;
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let discord: FakeDiscord;
let engine: DeliveryEngine;
let slackAdapter: SlackAdapter;
let discordAdapter: DiscordAdapter;
let events: Server;
let port: number;

beforeAll(async () => {
  [server, llm, slack, discord] = await Promise.all([
    startOwnPostgres(),
    new FakeOpenAi().start(),
    new FakeSlack().start(),
    new FakeDiscord().start(),
  ]);
  db = await openDatabase({
    databaseUrl: server.url,
    dataDir: '',
    logger: silentLogger,
    poolSize: 2,
    connectTimeoutMs: 2_000,
  });
  engine = testEngine(db, testAgent({ fake: llm, store: testStore(db) }));
  slackAdapter = new SlackAdapter(
    { botToken: 'xoxb-test', signingSecret: SIGNING_SECRET, apiUrl: slack.apiUrl },
    engine,
    silentLogger,
  );
  discordAdapter = new DiscordAdapter(
    {
      token: 'bot-token',
      applicationId: APP_ID,
      guildId: GUILD,
      apiUrl: discord.apiUrl,
      allowedGuilds: [GUILD],
    },
    engine,
    silentLogger,
  );
  await Promise.all([slackAdapter.start(), discordAdapter.start()]);
  port = await freePort();
  events = await serveSlackEvents(slackAdapter, port);
  // The database goes away once everything is up; the engine's polling is not started.
  await server.stop('immediate');
}, 120_000);
afterAll(async () => {
  await Promise.all([slackAdapter?.stop(), discordAdapter?.stop()]);
  await new Promise((resolve) => events?.close(resolve));
  await db?.close().catch(() => {});
  await Promise.all([llm?.stop(), slack?.stop(), discord?.stop()]);
  await server?.remove();
});

describe('Slack /spool with the database down', () => {
  it.each([['usage'], ['usage chart'], ['recall the printer'], ['result call_123']])(
    '/spool %s is acknowledged, then answered that the database is not answering',
    async (text) => {
      const id = `${text.replace(/\W/g, '-')}-${Date.now()}`;
      const response = await fetch(
        `http://127.0.0.1:${port}/slack/events`,
        signedRequest(
          new URLSearchParams({
            command: '/spool',
            text,
            team_id: TEAM,
            channel_id: 'C0DOWN',
            user_id: 'U1',
            response_url: slack.responseUrl(id),
            trigger_id: 't',
          }).toString(),
          SIGNING_SECRET,
          'application/x-www-form-urlencoded',
        ),
      );
      expect(response.status).toBe(200);
      await slack.waitFor(() => slack.responses(id).length > 0);
      expect(slack.responses(id)).toEqual([DATABASE_AWAY_REPLY]);
      expect(slack.responseArgs(id)[0]).toMatchObject({ response_type: 'ephemeral' });
    },
  );
});

describe('Discord commands with the database down', () => {
  const callbacks = (token: string) => discord.callbacksOf(token);
  const edits = (token: string) => discord.answersTo(token);

  it.each([
    ['recall', [{ name: 'query', value: 'the printer' }]],
    ['result', [{ name: 'id', value: 'call_123' }]],
  ])('/%s is answered privately that the database is not answering', async (name, options) => {
    const { token } = discord.sendCommand({ name, options, guildId: GUILD, channelId: nextId() });
    await discord.waitFor(() => callbacks(token).length === 1);
    expect(callbacks(token)[0]!.body).toMatchObject({
      type: 4,
      data: { content: DATABASE_AWAY_REPLY, flags: 64 },
    });
  });

  it('/usage is deferred privately, then told that the database is not answering', async () => {
    const { token } = discord.sendCommand({ name: 'usage', guildId: GUILD, channelId: nextId() });
    await discord.waitFor(() => edits(token).length === 1);
    expect(callbacks(token)[0]!.body).toMatchObject({ type: 5, data: { flags: 64 } });
    expect(edits(token)[0]!.body).toMatchObject({ content: DATABASE_AWAY_REPLY });
  });
});
