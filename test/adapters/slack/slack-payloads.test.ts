import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { DEFAULT_GREETING } from '../../../src/core/delivery/posts/greeting.ts';
import { testAgent } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi, userTexts } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import {
  expectAcknowledged,
  serveSlackAdapter,
  type ServedSlackAdapter,
} from '../../support/slack-spool.ts';

/**
 * Real payloads Slack sent, from public projects' fixtures and Slack's own reference (see the
 * README beside them), replayed as Slack delivers them: signed over HTTP, and over Socket Mode.
 */
const DIR = new URL('../../fixtures/slack-payloads/', import.meta.url);

interface Fixture {
  file: string;
  source: string;
  kind: 'events_api' | 'interactive' | 'slash_command';
  /**
   * answered: one reply, with the person's words reaching the model; noted: the same, with a note
   * below it; greeted: the greeting of a new agent thread, and nothing asked of the model.
   */
  expect: 'answered' | 'ignored' | 'noted' | 'acknowledged' | 'greeted';
  words?: string[];
  /** A reply in a thread Spool must already take part in: the replay mentions Spool there first. */
  inThread?: boolean;
  payload: Record<string, unknown>;
}

const fixtures: Fixture[] = readdirSync(DIR)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    ...(JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) as Omit<Fixture, 'file'>),
  }));

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let replay = 0;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
  llm.fallback = () => ({ content: `answer ${llm.requests.length}` });
});
afterAll(async () => {
  await slack.stop();
  await llm.stop();
  await db.close();
});

/**
 * The payload with its channels and files made unique to this replay (each replay is a message
 * Spool has never seen), and its files moved from Slack's file host to the fake's, which serves
 * them; a `noted` payload's files are served nowhere.
 */
function remapped(fixture: Fixture): { payload: Record<string, unknown>; channels: string[] } {
  replay++;
  const event = (fixture.payload.event ?? {}) as Record<string, unknown>;
  const files = Array.isArray(event.files)
    ? (event.files as Array<{ id?: unknown }>).map((f) => f.id)
    : [];
  const channelIds = [
    event.channel,
    (event.assistant_thread as { channel_id?: unknown } | undefined)?.channel_id,
    (fixture.payload.channel as { id?: unknown } | undefined)?.id,
    fixture.payload.channel_id,
  ];
  const ids = new Set(
    [...channelIds, ...files].filter((c): c is string => typeof c === 'string' && c !== ''),
  );
  let json = JSON.stringify(fixture.payload);
  const channels: string[] = [];
  for (const id of ids) {
    const unique = `${id}X${replay}`;
    json = json.replaceAll(`"${id}"`, `"${unique}"`);
    if (!files.includes(id)) channels.push(unique);
  }
  const payload = JSON.parse(json) as Record<string, unknown>;
  for (const file of ((payload.event as Record<string, unknown> | undefined)?.files ?? []) as Array<
    Record<string, unknown>
  >) {
    if (fixture.expect !== 'noted')
      slack.serveFile(file, Buffer.from(`the contents of ${String(file.name ?? file.id)}`));
  }
  return { payload, channels };
}

function runCorpus(transport: 'http' | 'socket') {
  let bot: ServedSlackAdapter;

  beforeAll(async () => {
    const pipeline = testEngine(db, testAgent({ fake: llm, store: testStore(db), tools: [] }));
    bot = await serveSlackAdapter(pipeline, {
      apiUrl: slack.apiUrl,
      ...(transport === 'socket' ? { appToken: 'xapp-test' } : {}),
    });
  });
  afterAll(() => bot.stop());

  /**
   * Delivers a payload as Slack does; resolves with how long Slack waited for the acknowledgement.
   */
  async function deliver(kind: Fixture['kind'], payload: Record<string, unknown>): Promise<number> {
    const started = Date.now();
    if (transport === 'socket') {
      const type =
        kind === 'events_api'
          ? 'events_api'
          : kind === 'interactive'
            ? 'interactive'
            : 'slash_commands';
      await (
        await slack.pushSocketEvent(payload, 0, type)
      ).acked;
      return Date.now() - started;
    }
    const [body, contentType] =
      kind === 'events_api'
        ? [JSON.stringify(payload), 'application/json']
        : [
            new URLSearchParams(
              kind === 'interactive'
                ? { payload: JSON.stringify(payload) }
                : (payload as Record<string, string>),
            ).toString(),
            'application/x-www-form-urlencoded',
          ];
    await expectAcknowledged(bot.post(body, contentType));
    return Date.now() - started;
  }

  const inboxOf = (channel: string) =>
    db.prisma.inboxEntry.findMany({
      where: { platform: 'slack', messageKey: { startsWith: `${channel}:` } },
      orderBy: { id: 'asc' },
    });
  const repliesIn = (channel: string) =>
    slack
      .callsTo('chat.postMessage')
      .filter((m) => m.channel === channel)
      .map((m) => String(m.text));

  it.each(fixtures.map((f) => [f.file, f] as const))('%s', async (_, fixture) => {
    const { payload, channels } = remapped(fixture);
    const event = (payload.event ?? {}) as Record<string, unknown>;
    const channel = channels[0] ?? `CNONE${replay}`;
    if (fixture.inThread) {
      // Spool takes part in the thread: it was mentioned at its start.
      const start = eventBody({
        type: 'app_mention',
        user: 'U0STARTER',
        text: `<@${BOT_USER}> start`,
        ts: event.thread_ts,
        channel,
      });
      // From the same workspace as the reply: its team and the authorizations Bolt reads it from.
      const { team_id, authorizations } = payload;
      await deliver('events_api', {
        ...start,
        team_id,
        ...(authorizations ? { authorizations } : {}),
      });
      await slack.waitFor(() => repliesIn(channel).length === 1);
    }
    const before = repliesIn(channel).length;
    const requestsBefore = llm.requests.length;
    const responsesBefore = slack.callsTo('response_url').length;
    const waited = await deliver(fixture.kind, payload);
    // Slack counts a request unanswered after 3 seconds as a failure, and sends it again.
    expect(waited).toBeLessThan(3_000);
    const messageRows = async () =>
      (await inboxOf(channel)).filter((row) => row.messageKey === `${channel}:${String(event.ts)}`);

    if (fixture.expect === 'greeted') {
      await slack.waitFor(() => repliesIn(channel).length > before);
      expect(repliesIn(channel).slice(before)).toEqual([DEFAULT_GREETING]);
      expect(llm.requests.length).toBe(requestsBefore);
      return;
    }
    if (fixture.expect === 'ignored' || fixture.expect === 'acknowledged') {
      // Acknowledged only once handled: had it been taken, its row would be there now.
      expect(await messageRows()).toEqual([]);
      expect(slack.callsTo('response_url')).toHaveLength(responsesBefore);
      expect(repliesIn(channel)).toHaveLength(before);
      return;
    }
    await expect
      .poll(async () => (await messageRows()).map((r) => r.status), { timeout: 15_000 })
      .toEqual(['answered']);
    const replies = repliesIn(channel).slice(before);
    expect(replies).toHaveLength(1);
    const asked = llm.requests.slice(requestsBefore).flatMap(userTexts).join('\n');
    for (const word of fixture.words ?? []) expect(asked).toContain(word);
    if (fixture.expect === 'noted') expect(replies[0]).toMatch(/_\(.+ was not read: .+\)_/);
  });
}

describe('real Slack payloads', () => {
  it('are at least 40, from public sources, each with what Spool must do', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    for (const f of fixtures)
      expect([
        f.file,
        f.source.length > 10,
        ['answered', 'ignored', 'noted', 'acknowledged', 'greeted'].includes(f.expect),
      ]).toEqual([f.file, true, true]);
  });

  describe('over the Events API (signed HTTP)', () => runCorpus('http'));
  describe('over Socket Mode', () => runCorpus('socket'));
});
