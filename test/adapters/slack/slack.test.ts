import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  SLACK_MESSAGE_LIMIT,
  SLACK_REFUSAL,
  type SlackAdapterConfig,
} from '../../../src/adapters/slack/slack-adapter.ts';
import {
  STOPPED_REPLY,
  type DeliveryEngine,
  type DeliveryOptions,
} from '../../../src/core/delivery/engine/engine.ts';
import { STOPPED_CLICK_REPLY } from '../../../src/core/delivery/posts/approval-text.ts';
import { STOPPED_PROMPT } from '../../../src/core/delivery/posts/replies.ts';
import type { Database } from '../../../src/store/database.ts';
import { DeliveryLedger } from '../../../src/store/delivery/delivery-ledger.ts';
import { searchHistoryTool } from '../../../src/core/builtins/search-history.ts';
import { defaultAgentOptions, testAgent, testTool } from '../../support/agent.ts';
import type { AgentOptions } from '../../../src/core/agent/agent.ts';
import { storeCapMarker } from '../../../src/core/markers.ts';
import { minimalPdf } from '../../support/pdf.ts';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { testDatabase, testEngine, testSearch, testStore } from '../../support/db.ts';
import {
  type ChatRequest,
  FakeOpenAi,
  lastUserText,
  type ServedUsage,
  userTexts,
} from '../../support/fake-openai.ts';
import {
  BOT_USER,
  buttonClick,
  eventBody,
  FakeSlack,
  isPrompt,
  signedRequest,
  TEAM,
} from '../../support/fake-slack.ts';
import { until } from '../../support/process.ts';
import { serveSlackAdapter, type ServedSlackAdapter } from '../../support/slack-spool.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { ProxyAgent } from 'undici';

const SIGNING_SECRET = 'test-signing-secret';

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;

const lookup = testTool('lookup', (args) => ({
  content: `inventory for ${String(args.sku)}: 42 units in warehouse-7`,
  isError: false,
}));

type Started = ServedSlackAdapter & { pipeline: DeliveryEngine };

async function startAdapter(
  overrides: Partial<SlackAdapterConfig> = {},
  database = db,
  agentOptions: Partial<AgentOptions> = {},
  pipelineOptions: Partial<DeliveryOptions> = {},
): Promise<Started> {
  const agent = testAgent({
    fake: llm,
    store: testStore(database),
    tools: [lookup, searchHistoryTool(testSearch(database))],
    overrides: agentOptions,
  });
  const pipeline = testEngine(database, agent, pipelineOptions);
  const served = await serveSlackAdapter(pipeline, {
    signingSecret: SIGNING_SECRET,
    apiUrl: slack.apiUrl,
    ...overrides,
  });
  return { ...served, pipeline };
}

/** Inbox rows of one Slack message (every delivery of it is the same row). */
const inboxRows = (channel: string, ts: string) =>
  db.prisma.inboxEntry.count({ where: { platform: 'slack', messageKey: `${channel}:${ts}` } });

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
});
afterAll(async () => {
  await slack.stop();
  await llm.stop();
  await db.close();
});

/** A channel no other test uses. */
const channel = () => `C${Math.random().toString(36).slice(2, 10).toUpperCase()}`;

describe('Slack over the Events API (signed HTTP)', () => {
  let started: Started;
  let port: number;
  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    started.event(body, headers);
  const command = (fields: Record<string, string>) => started.command(fields);
  const repliesIn = (ch: string) =>
    slack.callsTo('chat.postMessage').filter((m) => m.channel === ch);

  beforeAll(async () => {
    started = await startAdapter({ allowedUsers: ['U1', 'U2'] });
    port = started.port;
  });
  afterAll(() => started.stop());
  beforeEach(() => {
    llm.requests.length = 0;
    llm.fallback = undefined;
    slack.calls.length = 0;
  });

  it('answers url_verification and rejects unsigned requests', async () => {
    const challenge = await post({ type: 'url_verification', challenge: 'abc123', token: 't' });
    expect(await challenge.json()).toEqual({ challenge: 'abc123' });
    const forged = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      body: JSON.stringify(eventBody({ type: 'app_mention' })),
      headers: { 'content-type': 'application/json' },
    });
    expect(forged.status).toBe(401);
  });

  it('drops a correctly signed request dated an hour ahead, and answers the next one', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
    const ahead = signedRequest(
      JSON.stringify(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> from the future`,
          ts: '510.1',
          channel: ch,
        }),
      ),
      SIGNING_SECRET,
      'application/json',
      {},
      Date.now() + 3_600_000,
    );
    await fetch(`http://127.0.0.1:${port}/slack/events`, ahead);
    expect(
      (
        await post(
          eventBody({
            type: 'app_mention',
            user: 'U1',
            text: `<@${BOT_USER}> now`,
            ts: '511.1',
            channel: ch,
          }),
        )
      ).status,
    ).toBe(200);
    await slack.waitFor(() => repliesIn(ch).length === 1);
    expect(repliesIn(ch)).toMatchObject([{ thread_ts: '511.1', text: 'answer to now' }]);
    expect(await inboxRows(ch, '510.1')).toBe(0);
  });

  it('answers a mention with one reply in its thread, showing status while it works', async () => {
    const ch = channel();
    llm.enqueue({ content: '**Hello** there' });
    const response = await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> hi`,
        ts: '500.1',
        channel: ch,
      }),
    );
    // Slack hears "received" only once the message is in the inbox.
    expect(response.status).toBe(200);
    expect(await inboxRows(ch, '500.1')).toBe(1);
    await slack.waitFor(() => repliesIn(ch).length === 1);
    expect(repliesIn(ch)).toMatchObject([
      { channel: ch, thread_ts: '500.1', text: expect.stringContaining('*Hello*') },
    ]);
    expect(userTexts(llm.requests[0]!)).toEqual(['hi']);
    // Set once: Slack clears it when the reply is posted.
    const statuses = slack.callsTo('assistant.threads.setStatus').map((s) => s.status);
    expect(statuses).toEqual(['is thinking…']);
  });

  it('continues the conversation on a follow-up in the thread without a mention, and ignores other threads', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `turn ${userTexts(request).length}` });
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> first`,
        ts: '600.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U2',
        text: 'second',
        ts: '600.2',
        thread_ts: '600.1',
        channel: ch,
      }),
    );
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U2',
        text: 'not for spool',
        ts: '601.2',
        thread_ts: '601.1',
        channel: ch,
      }),
    );
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        subtype: 'message_changed',
        channel: ch,
        ts: '600.3',
        thread_ts: '600.1',
      }),
    );
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        bot_id: 'BOTHER',
        user: 'U9',
        text: 'bot chatter',
        ts: '600.4',
        thread_ts: '600.1',
        channel: ch,
      }),
    );
    // One more message in the thread: had any of the ignored ones been taken, it would be answered
    // before this.
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'third',
        ts: '600.5',
        thread_ts: '600.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 3);
    expect(repliesIn(ch).map((m) => [m.thread_ts, m.text])).toEqual([
      ['600.1', 'turn 1'],
      ['600.1', 'turn 2'],
      ['600.1', 'turn 3'],
    ]);
    expect(userTexts(llm.requests[2]!)).toEqual(['first', 'second', 'third']);
    expect(await inboxRows(ch, '601.2')).toBe(0);
  });

  it('in a group DM (mpim) answers a mention and its thread, and leaves other talk alone', async () => {
    const group = `G${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
    llm.fallback = (request) => ({ content: `group turn ${userTexts(request).length}` });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'mpim',
        user: 'U2',
        text: 'lunch?',
        ts: '660.1',
        channel: group,
      }),
    );
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> summarise`,
        ts: '661.1',
        channel: group,
      }),
    );
    await post(
      eventBody({
        type: 'message',
        channel_type: 'mpim',
        user: 'U2',
        text: 'and then?',
        ts: '661.2',
        thread_ts: '661.1',
        channel: group,
      }),
    );
    await slack.waitFor(() => repliesIn(group).length === 2);
    expect(repliesIn(group).map((m) => [m.thread_ts, m.text])).toEqual([
      ['661.1', 'group turn 1'],
      ['661.1', 'group turn 2'],
    ]);
    expect(await inboxRows(group, '660.1')).toBe(0);
  });

  it("gives the model a forwarded message's words, not made-up ones: a real forward (fixture 24), sent as a DM by an allowed user", async () => {
    const dm = `D${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
    const { payload } = JSON.parse(
      readFileSync(
        new URL(
          '../../fixtures/slack-payloads/24-channel-forwarded-message-no-mention.json',
          import.meta.url,
        ),
        'utf8',
      ),
    ) as { payload: { event: Record<string, unknown> } };
    llm.enqueue({ content: 'That says 123.' });
    await post(eventBody({ ...payload.event, user: 'U1', channel: dm, channel_type: 'im' }));
    await slack.waitFor(() => repliesIn(dm).length === 1);
    expect(userTexts(llm.requests[0]!)).toEqual([
      expect.stringMatching(/^Forwarded message from <@U05JAA9EN4T> in <#C07KTH1T4CQ> .*:\n> 123$/),
    ]);
  });

  it('answers a direct message without a mention, in a thread of its own', async () => {
    const dm = `D${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
    llm.enqueue({ content: 'hi in private' });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'im',
        user: 'U1',
        text: 'hello spool',
        ts: '650.1',
        channel: dm,
      }),
    );
    await slack.waitFor(() => repliesIn(dm).length === 1);
    expect(repliesIn(dm)[0]).toMatchObject({ thread_ts: '650.1', text: 'hi in private' });
    expect(userTexts(llm.requests[0]!)).toEqual(['hello spool']);
  });

  it('replies once to a message Slack retries and delivers both as a mention and as a message', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
    const mention = { user: 'U1', text: `<@${BOT_USER}> hello`, ts: '700.1', channel: ch };
    const body = eventBody({ type: 'app_mention', ...mention });
    await post(body);
    await post(body, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    await post(
      eventBody({ type: 'message', channel_type: 'channel', thread_ts: '700.1', ...mention }),
    );
    await post(body, { 'x-slack-retry-num': '2', 'x-slack-retry-reason': 'http_timeout' });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'next',
        ts: '700.2',
        thread_ts: '700.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(repliesIn(ch).map((m) => m.text)).toEqual(['answer to hello', 'answer to next']);
    expect(llm.requests.map(userTexts)).toEqual([['hello'], ['hello', 'next']]);
    expect(await inboxRows(ch, '700.1')).toBe(1);
  });

  it('splits a long reply into ordered messages with intact code blocks', async () => {
    const ch = channel();
    const code = [
      '```js',
      ...Array.from({ length: 150 }, (_, i) => `console.log(${i}); // ${'x'.repeat(20)}`),
      '```',
    ].join('\n');
    llm.enqueue({ content: `Start.\n\n${code}\n\nEnd.` });
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> code please`,
        ts: '800.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).some((m) => String(m.text).includes('End.')));
    const texts = repliesIn(ch).map((m) => String(m.text));
    expect(texts.length).toBeGreaterThan(1);
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(SLACK_MESSAGE_LIMIT);
      expect((text.match(/```/g) ?? []).length % 2).toBe(0);
    }
    const logged = texts
      .join('\n')
      .match(/console\.log\((\d+)\)/g)!
      .map((m) => Number(/\d+/.exec(m)![0]));
    expect(logged).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(texts[0]!.startsWith('Start.')).toBe(true);
  });

  it('answers three messages sent at once into one thread in order', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> one`,
        ts: '900.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    await Promise.all(
      ['two', 'three', 'four'].map((text, i) =>
        post(
          eventBody({
            type: 'message',
            channel_type: 'channel',
            user: 'U1',
            text,
            ts: `900.${i + 2}`,
            thread_ts: '900.1',
            channel: ch,
          }),
        ),
      ),
    );
    await slack.waitFor(() => repliesIn(ch).length === 4);
    const answers = repliesIn(ch).map((m) => m.text);
    expect(answers[0]).toBe('answer to one');
    // Delivery order over three parallel HTTP requests is not fixed; each is answered after
    // the one before it finished, with the whole thread so far.
    expect(new Set(answers.slice(1))).toEqual(
      new Set(['answer to two', 'answer to three', 'answer to four']),
    );
    // One at a time: each request already holds every earlier message, and replies go out in that
    // order.
    expect(llm.requests.map((r) => userTexts(r).length)).toEqual([1, 2, 3, 4]);
    expect(answers).toEqual(llm.requests.map((r) => `answer to ${userTexts(r).at(-1)}`));
  });

  it('finishes a reply a crashed process stored but only partly posted, posting no chunk twice', async () => {
    const ch = channel();
    const ledger = new DeliveryLedger(db);
    const lane = { platform: 'slack', workspace: TEAM, channel: ch, thread: '1600.1' };
    const entry = (await ledger.record(
      {
        lane,
        messageKey: `${ch}:1600.1`,
        kind: 'message',
        user: 'U1',
        text: 'q',
        delivery: { ts: '1600.1' },
      },
      false,
    ))!;
    await ledger.saveReply(entry.id, [{ text: 'part one' }, { text: 'part two' }]);
    // The crashed process had posted the first chunk, with its metadata, and died before recording
    // it.
    slack.threads.set('1600.1', [
      {
        ts: '1600.5',
        bot_id: 'BBOT',
        text: 'part one',
        metadata: { event_type: 'spool_reply', event_payload: { inbox: entry.id, seq: 0 } },
      },
    ]);
    await slack.waitFor(() => repliesIn(ch).length === 1);
    await expect
      .poll(() =>
        db.prisma.inboxEntry.findUnique({ where: { id: BigInt(entry.id) } }).then((r) => r?.status),
      )
      .toBe('answered');
    expect(repliesIn(ch).map((m) => m.text)).toEqual(['part two']);
    const outbox = await db.prisma.outboxChunk.findMany({
      where: { inboxId: BigInt(entry.id) },
      orderBy: { seq: 'asc' },
    });
    expect(outbox.map((c) => c.platformMessageId)).toEqual(['1600.5', expect.any(String)]);
    expect(
      slack
        .callsTo('assistant.threads.setStatus')
        .filter((c) => c.channel_id === ch)
        .map((c) => c.status),
    ).toEqual(['is thinking…']);
    expect(llm.requests).toEqual([]);
  });

  it('refuses a user who is not allowed, privately, without calling the model', async () => {
    const ch = channel();
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U-stranger',
        text: `<@${BOT_USER}> hi`,
        ts: '1000.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => slack.callsTo('chat.postEphemeral').length === 1);
    expect(slack.callsTo('chat.postEphemeral')[0]).toMatchObject({
      channel: ch,
      user: 'U-stranger',
      text: SLACK_REFUSAL,
    });
    expect(repliesIn(ch)).toEqual([]);
    expect(llm.requests).toEqual([]);
  });

  it('refuses /spool recall to a user who is not allowed', async () => {
    await command({
      command: '/spool',
      text: 'recall warehouse',
      team_id: TEAM,
      channel_id: channel(),
      user_id: 'U-stranger',
      response_url: slack.responseUrl('x'),
      trigger_id: 't',
    });
    await slack.waitFor(() => slack.callsTo('response_url').length === 1);
    expect(slack.callsTo('response_url')[0]).toMatchObject({
      response_type: 'ephemeral',
      text: SLACK_REFUSAL,
    });
  });

  it('reads the thread it is mentioned into, once', async () => {
    const ch = channel();
    slack.threads.set('1100.1', [
      { ts: '1100.1', user: 'U2', text: 'the build is red again' },
      { ts: '1100.2', user: 'U1', text: 'since the lockfile change' },
      { ts: '1100.3', user: 'U1', text: `<@${BOT_USER}> any idea?` },
    ]);
    llm.fallback = { content: 'Check the lockfile.' };
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> any idea?`,
        ts: '1100.3',
        thread_ts: '1100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    const first = userTexts(llm.requests[0]!)[0]!;
    expect(first).toContain('<@U2>: the build is red again');
    expect(first).toContain('<@U1>: since the lockfile change');
    expect(first.endsWith('any idea?')).toBe(true);
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'thanks',
        ts: '1100.4',
        thread_ts: '1100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(slack.callsTo('conversations.replies')).toHaveLength(1);
  });

  it('tells the thread when the model fails, and the next message works', async () => {
    const ch = channel();
    llm.enqueue({ status: 500, message: 'down', type: 'server_error' });
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> hi`,
        ts: '1200.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    expect(repliesIn(ch)[0]!.text).toBe(
      'Sorry, the language model request failed: the model endpoint had a server error (500). Please try again.',
    );
    await expect
      .poll(
        async () =>
          (await db.prisma.inboxEntry.findFirst({ where: { messageKey: `${ch}:1200.1` } }))?.status,
      )
      .toBe('answered');
    llm.enqueue({ content: 'back up' });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'again',
        ts: '1200.2',
        thread_ts: '1200.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(repliesIn(ch)[1]!.text).toBe('back up');
  });

  /** A mention in a new channel whose turn runs lookup once; resolves with the channel. */
  async function lookedUp(sku: string, ts: string): Promise<string> {
    const ch = channel();
    llm.enqueue(
      { toolCalls: [{ id: 'call_lookup', name: 'lookup', arguments: JSON.stringify({ sku }) }] },
      { content: 'Some units.' },
    );
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> stock of ${sku}?`,
        ts,
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    return ch;
  }

  it('recalls a tool run from an earlier thread of the channel, and nothing from another channel', async () => {
    const ch = await lookedUp('SKU-77', '1300.1');
    const other = channel();

    await command({
      command: '/spool',
      text: 'recall warehouse',
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U1',
      response_url: slack.responseUrl('a'),
      trigger_id: 't',
    });
    await command({
      command: '/spool',
      text: 'recall warehouse',
      team_id: TEAM,
      channel_id: other,
      user_id: 'U1',
      response_url: slack.responseUrl('b'),
      trigger_id: 't',
    });
    await slack.waitFor(() => slack.callsTo('response_url').length === 2);
    const [found, nothing] = slack.callsTo('response_url');
    expect(found).toMatchObject({ response_type: 'ephemeral' });
    // Spool gave the call an id of its own and kept the model's beside it.
    const call = await db.prisma.toolCall.findFirstOrThrow({
      where: { channelKey: { contains: ch }, modelCallId: 'call_lookup' },
    });
    expect(call.toolCallId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(String(found!.text)).toContain(`TOOL RESULT lookup tool_call_id="${call.toolCallId}"`);
    expect(String(found!.text)).toContain('warehouse-7');
    expect(nothing!.text).toBe(
      'No earlier messages or tool runs in this channel match "warehouse".',
    );

    // /spool result sends the whole result privately, as a file in a DM; from another channel there
    // is none.
    await command({
      command: '/spool',
      text: `result ${call.toolCallId}`,
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U1',
      response_url: slack.responseUrl('c'),
      trigger_id: 't',
    });
    await command({
      command: '/spool',
      text: `result ${call.toolCallId}`,
      team_id: TEAM,
      channel_id: other,
      user_id: 'U1',
      response_url: slack.responseUrl('d'),
      trigger_id: 't',
    });
    await command({
      command: '/spool',
      text: `result ${call.toolCallId}`,
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U9',
      response_url: slack.responseUrl('e'),
      trigger_id: 't',
    });
    await slack.waitFor(() => slack.callsTo('response_url').length === 5);
    expect(
      slack
        .callsTo('response_url')
        .slice(2)
        .map((r) => r.text),
    ).toEqual([
      'Sent you the full result in a direct message.',
      `No tool run with tool_call_id "${call.toolCallId}" in this channel. Recall shows the ids.`,
      SLACK_REFUSAL,
    ]);
    const sent = [...slack.uploads.values()].find((u) => u.filename === `${call.toolCallId}.txt`)!;
    expect(sent.completed).toMatchObject({
      channel_id: 'DU1',
      initial_comment: `The full result of lookup (${call.toolCallId}): 45 characters.`,
    });
    expect(sent.body).toContain('inventory for SKU-77: 42 units in warehouse-7');
  });

  it('sends /spool result as messages in the DM when Slack refuses the upload', async () => {
    const ch = await lookedUp('SKU-88', '1310.1');
    const call = await db.prisma.toolCall.findFirstOrThrow({
      where: { channelKey: { contains: ch }, modelCallId: 'call_lookup' },
    });
    slack.platformError = (c) =>
      c.method === 'files.getUploadURLExternal' ? 'file_uploads_disabled' : undefined;
    try {
      await command({
        command: '/spool',
        text: `result ${call.toolCallId}`,
        team_id: TEAM,
        channel_id: ch,
        user_id: 'U1',
        response_url: slack.responseUrl('f'),
        trigger_id: 't',
      });
      await slack.waitFor(() => slack.callsTo('response_url').length === 1);
    } finally {
      slack.platformError = undefined;
    }
    expect(slack.callsTo('response_url')[0]).toMatchObject({
      response_type: 'ephemeral',
      text: 'Sent you the full result in a direct message.',
    });
    const dm = slack
      .callsTo('chat.postMessage')
      .filter((m) => m.channel === 'DU1')
      .map((m) => String(m.text));
    expect(dm).toEqual([
      `The full result of lookup (${call.toolCallId}): 45 characters. _(I could not send it as a file (Slack said file_uploads_disabled), so here it is as messages.)_`,
      '```\ninventory for SKU-88: 42 units in warehouse-7\n```',
    ]);
  });
});

describe('Slack refusing calls while replies are posted', () => {
  it.each([
    ['429 with Retry-After', { status: 429, headers: { 'retry-after': '1' } }],
    ['503', { status: 503 }],
  ])(
    'every third chat.postMessage refused (%s): each reply is delayed, and posted exactly once',
    async (_, refusal) => {
      let calls = 0;
      slack.refuse = (call) =>
        call.method === 'chat.postMessage' && ++calls % 3 === 0 ? refusal : undefined;
      llm.fallback = (request) => ({
        content: `answer to ${lastUserText(request)}`,
      });
      const started = await startAdapter();
      try {
        const ch = channel();
        const threads = ['601.1', '602.1', '603.1', '604.1', '605.1', '606.1'];
        for (const ts of threads) {
          const body = JSON.stringify(
            eventBody({
              type: 'app_mention',
              user: 'U1',
              text: `<@${BOT_USER}> storm ${ts}`,
              ts,
              channel: ch,
            }),
          );
          expect((await started.post(body, 'application/json')).status).toBe(200);
        }
        const repliesTo = (ts: string) =>
          slack
            .callsTo('chat.postMessage')
            .filter((m) => m.channel === ch && m.thread_ts === ts)
            .map((m) => m.text);
        await slack.waitFor(() => threads.every((ts) => repliesTo(ts).length > 0), 60_000);
        for (const ts of threads) expect(repliesTo(ts)).toEqual([`answer to storm ${ts}`]);
        expect(
          slack.refusedCalls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === ch)
            .length,
        ).toBeGreaterThan(0);
      } finally {
        slack.refuse = undefined;
        await started.stop();
      }
    },
  );
});

describe('a database outage', () => {
  it('answers 500, so that Slack sends the event again, and posts nothing it could not store', async () => {
    const broken = await testDatabase();
    const started = await startAdapter({}, broken);
    await broken.close();
    try {
      const ch = channel();
      const response = await started.event(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> hi`,
          ts: '1500.1',
          channel: ch,
        }),
      );
      // Bolt answers after the listener (processBeforeResponse): by now it has done all it will.
      expect(response.status).toBe(500);
      expect(slack.callsTo('chat.postMessage').filter((m) => m.channel === ch)).toEqual([]);
    } finally {
      await started.stop();
    }
  });
});

describe('Slack over Socket Mode', () => {
  it('connects through apps.connections.open and answers a mention', async () => {
    const started = await startAdapter({
      appToken: 'xapp-test',
      signingSecret: undefined,
      statusRetryMs: 0,
    });
    try {
      const ch = channel();
      slack.statusApi = false;
      llm.enqueue({ content: 'over the socket' });
      await slack.sendSocketEvent(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> ping`,
          ts: '1400.1',
          channel: ch,
        }),
      );
      // The envelope is acknowledged only once the message is in the inbox.
      expect(await inboxRows(ch, '1400.1')).toBe(1);
      await slack.waitFor(() => slack.callsTo('chat.postMessage').some((m) => m.channel === ch));
      expect(slack.callsTo('apps.connections.open').length).toBeGreaterThanOrEqual(1);
      expect(slack.callsTo('chat.postMessage').find((m) => m.channel === ch)).toMatchObject({
        thread_ts: '1400.1',
        text: 'over the socket',
      });
      // Without the AI status API, a reaction shows work in progress and is removed after.
      expect(slack.callsTo('reactions.add').find((r) => r.channel === ch)).toMatchObject({
        timestamp: '1400.1',
        name: 'hourglass_flowing_sand',
      });
      expect(slack.callsTo('reactions.remove').find((r) => r.channel === ch)).toMatchObject({
        timestamp: '1400.1',
      });
      // The status API is tried again later (here at once): once it works, it is used again.
      slack.statusApi = true;
      llm.enqueue({ content: 'status again' });
      await slack.sendSocketEvent(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> again`,
          ts: '1401.1',
          channel: ch,
        }),
      );
      await slack.waitFor(() =>
        slack.callsTo('chat.postMessage').some((m) => m.text === 'status again'),
      );
      expect(
        slack
          .callsTo('assistant.threads.setStatus')
          .filter((c) => c.thread_ts === '1401.1')
          .map((c) => c.status),
      ).toEqual(['is thinking…']);
    } finally {
      slack.statusApi = true;
      await started.stop();
    }
  });
});

describe('Slack through a proxy (HTTPS_PROXY / HTTP_PROXY)', () => {
  it('sends Web API calls, apps.connections.open and the Socket Mode WebSocket through it', async () => {
    const proxy = await startConnectProxy();
    const started = await startAdapter({
      appToken: 'xapp-test',
      signingSecret: undefined,
      dispatcher: new ProxyAgent(proxy.url),
    });
    try {
      const ch = channel();
      llm.enqueue({ content: 'through the proxy' });
      await slack.sendSocketEvent(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> ping`,
          ts: '1500.1',
          channel: ch,
        }),
      );
      await slack.waitFor(() =>
        slack
          .callsTo('chat.postMessage')
          .some((m) => m.channel === ch && m.text === 'through the proxy'),
      );
      // The Web API and the WebSocket are both on the fake's one port: every connection was
      // tunnelled there.
      expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(slack.apiUrl).host]));
      expect(proxy.tunnels.length).toBeGreaterThanOrEqual(2);
    } finally {
      await started.stop();
      proxy.stop();
    }
  });
});

describe('files shared in Slack', () => {
  let started: Started;
  const post = (body: Record<string, unknown>) => started.event(body);
  const repliesIn = (ch: string) =>
    slack.callsTo('chat.postMessage').filter((m) => m.channel === ch);
  /** A thread reply with files, as Slack sends it: subtype file_share. */
  const fileShare = (ch: string, ts: string, text: string, files: Array<Record<string, unknown>>) =>
    eventBody({
      type: 'message',
      subtype: 'file_share',
      channel_type: 'channel',
      user: 'U1',
      text,
      ts,
      thread_ts: '100.1',
      channel: ch,
      files,
    });
  const sharedResults = () =>
    db.prisma.toolResult.findMany({
      where: { toolName: 'shared_file' },
      include: { binaries: true },
      orderBy: { id: 'asc' },
    });
  /**
   * Reads the shared file's preview, greps it for ERROR, answers with the line found; otherwise
   * says what it was shown.
   */
  const grepper = (request: ChatRequest) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool' && last.content?.includes('matching lines for'))
      return {
        content: `Found: ${/^@\d+: .*?(ERROR[^\n]*)/m.exec(last.content)?.[1] ?? 'nothing'}`,
      };
    const shared = [...request.messages]
      .reverse()
      .find((m) => m.tool_calls?.[0]?.function.name === 'shared_file');
    if (last.role === 'tool' && shared && last.content?.includes('[truncated')) {
      return {
        toolCalls: [
          {
            id: 'g',
            name: 'get_continuation',
            arguments: JSON.stringify({
              tool_call_id: shared.tool_calls![0]!.id,
              offset: 0,
              pattern: 'ERROR',
            }),
          },
        ],
      };
    }
    return {
      content: `shown: ${request.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' | ')}`,
    };
  };
  async function startThread(ch: string): Promise<void> {
    llm.fallback = grepper;
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> hello`,
        ts: '100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
  }

  beforeAll(async () => {
    started = await startAdapter({}, db, {
      resultIntake: { ...defaultAgentOptions.resultIntake, storeMaxChars: 250_000 },
    });
  });
  afterAll(() => started.stop());
  beforeEach(() => {
    llm.requests.length = 0;
    slack.calls.length = 0;
    slack.downloads.length = 0;
  });

  it('answers a question about a line deep inside a 200 kB log shared in the thread, through grep', async () => {
    const ch = channel();
    await startThread(ch);
    const log = `${'2026-11-23 INFO all quiet\n'.repeat(6_000)}2026-11-23 ERROR disk full on /dev/sdz\n${'2026-11-23 INFO all quiet\n'.repeat(1_500)}`;
    expect(log.length).toBeGreaterThan(190_000);
    await post(
      fileShare(ch, '100.2', 'what is wrong in this log?', [
        slack.shareFile('app.log', Buffer.from(log), 'text/plain'),
      ]),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(repliesIn(ch)[1]!.text).toBe('Found: ERROR disk full on /dev/sdz');
    // The preview, then the grep: the fact is found in two requests after the thread's first (goal:
    // at most 3).
    expect(llm.requests.length - 1).toBe(2);
    expect(slack.downloads).toEqual([
      { path: expect.stringMatching(/\/app\.log$/), authorization: 'Bearer xoxb-test' },
    ]);
    // The model saw a preview, with the user's words; the store has the whole file.
    const [first] = llm.requests.filter((r) => r.messages.at(-1)!.role === 'tool');
    expect(first!.messages.at(-1)!.content!.length).toBeLessThan(20_000);
    expect(userTexts(first!).at(-1)).toBe('what is wrong in this log?');
    expect((await sharedResults()).at(-1)!.content).toBe(log);
    // Found again later by recall, like any tool run, with the offset to read on from.
    const hits = await started.pipeline.recall(
      { lane: { platform: 'slack', workspace: TEAM, channel: ch, thread: '' }, user: 'U1' },
      'disk full',
    );
    const found = hits!.find((hit) => hit.kind === 'tool_result');
    expect(found).toMatchObject({
      toolName: 'shared_file',
      excerpt: expect.stringContaining('ERROR disk full on /dev/sdz'),
    });
    expect(log.slice(found!.offset!).startsWith('disk full on /dev/sdz')).toBe(true);
  });

  it('answers a top-level mention with a file that Slack sent only as a message event', async () => {
    const ch = channel();
    llm.fallback = grepper;
    const note = slack.shareFile('note.txt', Buffer.from('the deploy is at noon'), 'text/plain');
    await post(
      eventBody({
        type: 'message',
        subtype: 'file_share',
        channel_type: 'channel',
        user: 'U1',
        text: `<@${BOT_USER}> when?`,
        ts: '300.1',
        channel: ch,
        files: [note],
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 1);
    expect(repliesIn(ch)[0]).toMatchObject({
      thread_ts: '300.1',
      text: 'shown: the deploy is at noon',
    });
  });

  // Bolt's ignoreSelf drops events of the app's own user, uploads included: a reply posted as a
  // file never loops back.
  it("never answers its own upload, which Slack sends back as a file_share of the bot's user", async () => {
    const ch = channel();
    await startThread(ch);
    const own = slack.shareFile(`reply-1.md`, Buffer.from('a long reply'), 'text/markdown');
    await post(
      eventBody({
        type: 'message',
        subtype: 'file_share',
        channel_type: 'channel',
        user: BOT_USER,
        text: 'The reply is long',
        ts: '100.2',
        thread_ts: '100.1',
        channel: ch,
        files: [own],
      }),
    );
    // One more message: had the upload been taken for a question, it would be answered first.
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'and now?',
        ts: '100.3',
        thread_ts: '100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(llm.requests.map((r) => userTexts(r).at(-1))).toEqual(['hello', 'and now?']);
    expect(slack.downloads).toEqual([]);
  });

  it('keeps a CSV over the store cap up to the cap, with the marker the model reads', async () => {
    const ch = channel();
    await startThread(ch);
    const csv = `id,amount\n${Array.from({ length: 40_000 }, (_, i) => `${i},${i * 3}`).join('\n')}`;
    expect(csv.length).toBeGreaterThan(250_000);
    await post(
      fileShare(ch, '100.2', 'sum it', [
        slack.shareFile('export.csv', Buffer.from(csv), 'text/csv'),
      ]),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    const stored = (await sharedResults()).at(-1)!.content;
    expect(stored.endsWith(storeCapMarker(250_000, csv.length))).toBe(true);
    expect(stored.startsWith(csv.slice(0, 250_000))).toBe(true);
  });

  it('reads the text of a PDF, and describes an image it cannot show, keeping its bytes', async () => {
    const ch = channel();
    await startThread(ch);
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const files = [
      slack.shareFile(
        'report.pdf',
        minimalPdf(['Quarterly report', 'Churn: 3.1%']),
        'application/pdf',
      ),
      slack.shareFile('chart.png', png, 'image/png'),
    ];
    await post(fileShare(ch, '100.2', '', files));
    await slack.waitFor(() => repliesIn(ch).length === 2);
    expect(repliesIn(ch)[1]!.text).toContain('Quarterly report');
    expect(repliesIn(ch)[1]!.text).toContain('Churn: 3.1%');
    expect(repliesIn(ch)[1]!.text).toContain(
      `[image "chart.png", image/png, ${png.length} bytes: its bytes are stored.]`,
    );
    // Files alone, no words: none are made up for the message.
    expect(userTexts(llm.requests.at(-1)!).at(-1)).toBe('');
    const image = (await sharedResults()).at(-1)!.binaries[0]!;
    expect({ kind: image.kind, mimeType: image.mimeType, data: Buffer.from(image.data!) }).toEqual({
      kind: 'image',
      mimeType: 'image/png',
      data: png,
    });
  });

  it('reads no file over the size cap, declared or streamed, says so below the reply, and answers the rest', async () => {
    const ch = channel();
    await startThread(ch);
    const declaredBig = slack.shareFile('big.log', Buffer.from('x'), 'text/plain', 5_000_000);
    const streamsBig = slack.shareFile('liar.log', Buffer.alloc(2_000_000, 'y'), 'text/plain', 100);
    const small = slack.shareFile('small.txt', Buffer.from('the small one'), 'text/plain');
    await post(fileShare(ch, '100.2', 'read these', [declaredBig, streamsBig, small]));
    await slack.waitFor(() => repliesIn(ch).length >= 2);
    const reply = repliesIn(ch)
      .slice(1)
      .map((m) => String(m.text))
      .join('');
    expect(reply).toContain('the small one');
    expect(reply).toContain('big.log was not read: it is over the 1.0 MB limit for files.');
    expect(reply).toContain('liar.log was not read: it is over the 1.0 MB limit for files.');
    expect(slack.downloads.map((d) => d.path.split('/').pop())).not.toContain('big.log');
  });

  it('posts a 20,000-char reply as one upload in the thread, with a message saying what it is', async () => {
    const ch = channel();
    await startThread(ch);
    const long = Array.from(
      { length: 400 },
      (_, i) => `${i}. ${'a finding worth reading '.repeat(2)}`,
    )
      .join('\n')
      .padEnd(20_000, '.')
      .slice(0, 20_000);
    llm.enqueue({ content: long });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'the full report please',
        ts: '100.2',
        thread_ts: '100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() =>
      slack.callsTo('files.completeUploadExternal').some((c) => c.channel_id === ch),
    );
    const [done] = slack.callsTo('files.completeUploadExternal').filter((c) => c.channel_id === ch);
    expect(done).toMatchObject({
      thread_ts: '100.1',
      initial_comment: expect.stringMatching(
        /^The reply is 20,000 characters long, so here it is as a file, reply-\d+\.md\.$/,
      ),
    });
    const [upload] = [...slack.uploads.values()].filter((u) => u.completed === done);
    expect(upload!.body).toBe(long);
    await expect
      .poll(() =>
        db.prisma.inboxEntry
          .findFirst({ where: { messageKey: `${ch}:100.2` } })
          .then((r) => r?.status),
      )
      .toBe('answered');
    // Only the thread's first reply went as a message.
    expect(repliesIn(ch)).toHaveLength(1);
  });

  it('posts a long reply as messages when Slack refuses its upload (missing_scope), saying why, and uploads once', async () => {
    const ch = channel();
    await startThread(ch);
    slack.platformError = (call) =>
      call.method === 'files.getUploadURLExternal' ? 'missing_scope' : undefined;
    try {
      const long = Array.from({ length: 400 }, (_, i) => `finding ${i} is worth reading`).join(
        '\n\n',
      );
      llm.enqueue({ content: long });
      await post(
        eventBody({
          type: 'message',
          channel_type: 'channel',
          user: 'U1',
          text: 'the full report please',
          ts: '100.2',
          thread_ts: '100.1',
          channel: ch,
        }),
      );
      await expect
        .poll(() =>
          db.prisma.inboxEntry
            .findFirst({ where: { messageKey: `${ch}:100.2` } })
            .then((r) => r?.status),
        )
        .toBe('answered');
      const texts = repliesIn(ch)
        .slice(1)
        .map((m) => String(m.text));
      expect(texts.length).toBeGreaterThan(2);
      expect(texts.join('\n').match(/finding \d+/g)).toEqual(
        Array.from({ length: 400 }, (_, i) => `finding ${i}`),
      );
      expect(texts.at(-1)).toContain(
        'I could not post this long reply as a file (Slack said missing_scope), so here it is as messages.',
      );
      expect(slack.callsTo('files.getUploadURLExternal')).toHaveLength(1);
    } finally {
      slack.platformError = undefined;
    }
  });

  it('reads a Slack Connect file the event lists without a URL, through files.info, and names one files.info refuses', async () => {
    const ch = channel();
    await startThread(ch);
    const log = `${'INFO all quiet\n'.repeat(50)}ERROR certificate expired for api.example\n`;
    const hidden = slack.shareConnectFile('connect.log', Buffer.from(log), 'text/plain');
    await post(
      fileShare(ch, '100.2', 'what is wrong in this log?', [
        hidden,
        { id: 'FGONE', mode: 'file_access', file_access: 'check_file_info' },
      ]),
    );
    await slack.waitFor(() => repliesIn(ch).length === 2);
    // The grepper shows what the model was given: the whole small file.
    expect(repliesIn(ch)[1]!.text).toContain('ERROR certificate expired for api.example');
    expect(repliesIn(ch)[1]!.text).toContain(
      'file FGONE was not read: it could not be fetched (Slack did not say where it is (files.info: file_not_found))',
    );
    expect(
      slack
        .callsTo('files.info')
        .map((c) => c.file)
        .sort(),
    ).toEqual(['FGONE', hidden.id].sort());
  });

  it('keeps the language of a long code-only reply, and never uploads a file a crashed process already posted', async () => {
    const ch = channel();
    await startThread(ch);
    const code = [
      '```python',
      ...Array.from({ length: 400 }, (_, i) => `print("line ${i}")  # ${'x'.repeat(10)}`),
      '```',
    ].join('\n');
    llm.enqueue({ content: code });
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'a script',
        ts: '100.2',
        thread_ts: '100.1',
        channel: ch,
      }),
    );
    await slack.waitFor(() =>
      slack.callsTo('files.completeUploadExternal').some((c) => c.channel_id === ch),
    );
    const upload = [...slack.uploads.values()].find((u) => u.completed?.channel_id === ch)!;
    expect(upload).toMatchObject({
      filename: expect.stringMatching(/^reply-\d+\.py$/),
      snippetType: 'python',
    });
    expect(upload.body).toContain('print("line 399")');
    expect(upload.body).not.toContain('```');

    // A process uploaded this reply and died before recording it: the next one finds it in the
    // thread.
    const ledger = new DeliveryLedger(db);
    const lane = { platform: 'slack', workspace: TEAM, channel: ch, thread: '1700.1' };
    const entry = (await ledger.record(
      {
        lane,
        messageKey: `${ch}:1700.1`,
        kind: 'message',
        user: 'U1',
        text: 'q',
        delivery: { ts: '1700.1' },
      },
      false,
    ))!;
    const name = `reply-${entry.id}.md`;
    await ledger.saveReply(entry.id, [
      {
        text: 'The reply is long',
        file: { name, content: 'x'.repeat(9_000), language: 'markdown' },
      },
    ]);
    slack.threads.set('1700.1', [
      { ts: '1700.5', bot_id: 'BBOT', text: 'The reply is long', files: [{ id: 'FPOSTED', name }] },
    ]);
    const uploadsBefore = slack.callsTo('files.getUploadURLExternal').length;
    await expect
      .poll(() =>
        db.prisma.inboxEntry.findUnique({ where: { id: BigInt(entry.id) } }).then((r) => r?.status),
      )
      .toBe('answered');
    expect(slack.callsTo('files.getUploadURLExternal')).toHaveLength(uploadsBefore);
    expect(
      (await db.prisma.outboxChunk.findMany({ where: { inboxId: BigInt(entry.id) } })).map(
        (c) => c.platformMessageId,
      ),
    ).toEqual(['FPOSTED']);
  });

  it('never sends the bot token to a file URL on another host', async () => {
    const ch = channel();
    await startThread(ch);
    const asked: Array<string | undefined> = [];
    const elsewhere = createServer((req, res) => {
      asked.push(req.headers.authorization);
      res.end('secret plans');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}/files/F1/plans.txt`;
      await post(
        fileShare(ch, '100.2', 'open this', [
          {
            id: 'F1',
            name: 'plans.txt',
            mimetype: 'text/plain',
            size: 12,
            url_private: url,
            url_private_download: url,
          },
        ]),
      );
      await slack.waitFor(() => repliesIn(ch).length >= 2);
      expect(asked).toEqual([]);
      expect(
        repliesIn(ch)
          .slice(1)
          .map((m) => String(m.text))
          .join(''),
      ).toContain(
        "plans.txt was not read: it could not be fetched (it is not on Slack's file host",
      );
    } finally {
      elsewhere.close();
    }
  });
});

describe('a per-channel policy', () => {
  it('offers a tool in the channel that allows it and not in another, where a call to it is refused; and sets the model, prompt and who may talk', async () => {
    const [ops, general] = [channel(), channel()];
    const policy = {
      rules: [
        { match: { platform: 'slack' }, tools: ['search_history', 'get_continuation'] },
        {
          match: { platform: 'slack', workspace: TEAM, channel: ops },
          tools: ['lookup', 'get_continuation'],
          model: 'gpt-4o',
          systemPromptAddition: 'This is the ops channel.',
          users: ['U1'],
        },
      ],
    };
    const started = await startAdapter({ allowedUsers: ['U1', 'U2'] }, db, {}, { policy });
    const post = (body: Record<string, unknown>) => started.event(body);
    const repliesIn = (ch: string) =>
      slack.callsTo('chat.postMessage').filter((m) => m.channel === ch);
    try {
      llm.requests.length = 0;
      // The model tries the lookup tool everywhere; only the ops channel runs it.
      llm.fallback = (request) =>
        request.messages.at(-1)!.role === 'user'
          ? { toolCalls: [{ id: 'l', name: 'lookup', arguments: '{"sku":"SKU-1"}' }] }
          : { content: `tool said: ${request.messages.at(-1)!.content}` };
      const before = lookup.calls.length;
      await post(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> stock?`,
          ts: '1800.1',
          channel: ops,
        }),
      );
      await slack.waitFor(() => repliesIn(ops).length === 1);
      await post(
        eventBody({
          type: 'app_mention',
          user: 'U2',
          text: `<@${BOT_USER}> stock?`,
          ts: '1801.1',
          channel: general,
        }),
      );
      await slack.waitFor(() => repliesIn(general).length === 1);
      const [inOps, , inGeneral] = llm.requests;
      expect(inOps!.tools!.map((t) => t.function.name).sort()).toEqual([
        'get_continuation',
        'lookup',
      ]);
      expect(inGeneral!.tools!.map((t) => t.function.name).sort()).toEqual([
        'get_continuation',
        'search_history',
      ]);
      expect([inOps!.model, inGeneral!.model]).toEqual(['gpt-4o', 'fake-model']);
      expect(inOps!.messages[0]!.content).toMatch(/\n\nThis is the ops channel\.$/);
      expect(inGeneral!.messages[0]!.content).not.toContain('ops channel');
      expect(repliesIn(ops)[0]!.text).toBe(
        'tool said: inventory for SKU-1: 42 units in warehouse-7',
      );
      expect(repliesIn(general)[0]!.text).toMatch(
        /^tool said: \{"error":"Unknown tool \\?"lookup\\?"\. Available tools: search_history, get_continuation/,
      );
      expect(lookup.calls.length - before).toBe(1);
      // The ops channel lets only U1 talk; the platform's list still lets U2 talk elsewhere.
      await post(
        eventBody({
          type: 'app_mention',
          user: 'U2',
          text: `<@${BOT_USER}> me too`,
          ts: '1802.1',
          channel: ops,
        }),
      );
      await slack.waitFor(() =>
        slack.callsTo('chat.postEphemeral').some((c) => c.channel === ops && c.user === 'U2'),
      );
    } finally {
      llm.fallback = undefined;
      await started.stop();
    }
  });
});

describe('approvals in Slack threads', () => {
  const policy = {
    rules: [{ match: { platform: 'slack' }, approve: ['lookup'], approvers: ['U9'] }],
  };
  const asksLookup = (request: ChatRequest) =>
    request.messages.at(-1)!.role === 'user'
      ? { toolCalls: [{ id: 'l', name: 'lookup', arguments: '{"sku":"SKU-9"}' }] }
      : { content: `tool said: ${request.messages.at(-1)!.content}` };
  const approvalRow = (toolCallId: string) =>
    db.prisma.toolCall.findFirstOrThrow({
      where: { toolCallId },
      select: { approval: true, approvalBy: true, approvalAt: true, runStartedAt: true },
    });

  let started: Started;
  const post = (body: Record<string, unknown>) => started.event(body);
  const click = (ch: string, user: string, actionId: 'spool_approve' | 'spool_deny') => {
    const prompt = slack.prompts(ch)[0]!;
    const payload = buttonClick({
      user,
      channel: ch,
      messageTs: prompt.ts,
      threadTs: prompt.threadTs,
      actionId,
      value: prompt.toolCallId,
      responseUrl: slack.responseUrl(`${ch}-${user}-${Math.random()}`),
    });
    return started.interaction(payload);
  };
  const replyIn = (ch: string) =>
    slack.callsTo('chat.postMessage').find((m) => m.channel === ch && !isPrompt(m));
  /** Asks in a new channel and waits for the approval prompt there. */
  async function ask(ts: string): Promise<string> {
    const ch = channel();
    await post(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> stock of SKU-9?`,
        ts,
        channel: ch,
      }),
    );
    await slack.waitFor(() => slack.prompts(ch).length === 1);
    return ch;
  }

  const startWithPolicy = async () => {
    started = await startAdapter({ allowedUsers: ['U1', 'U9'] }, db, {}, { policy });
  };
  beforeAll(async () => {
    await startWithPolicy();
    llm.fallback = asksLookup;
  });
  afterAll(async () => {
    llm.fallback = undefined;
    await started.stop();
  });

  it('holds no lease while 50 calls await approval, answers each thread once its call is decided, and keeps later messages behind it', async () => {
    const channels = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(`1950.${i + 1}`)));
    const waiting = () =>
      db.prisma.inboxEntry.findMany({
        where: { OR: channels.map((ch) => ({ messageKey: { startsWith: `${ch}:` } })) },
        include: { lane: true },
      });
    await expect
      .poll(async () => (await waiting()).filter((r) => r.status === 'waiting').length)
      .toBe(50);
    // Parked on their rows: each lane is let go, so nothing of this process works them meanwhile.
    await expect.poll(async () => (await waiting()).filter((r) => r.lane?.holder).length).toBe(0);
    // A later message in the first thread waits behind the one awaiting a decision.
    const [first] = channels as [string, ...string[]];
    await post(
      eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: 'and SKU-10?',
        ts: '1950.99',
        thread_ts: '1950.1',
        channel: first,
      }),
    );
    expect((await click(first, 'U9', 'spool_approve')).status).toBe(200);
    await slack.waitFor(
      () =>
        slack.callsTo('chat.postMessage').filter((m) => m.channel === first && !isPrompt(m))
          .length === 1,
    );
    expect(replyIn(first)!.text).toContain('tool said: inventory for SKU-9');
    // Only then is the later message taken up: its turn asks for approval in turn.
    await slack.waitFor(() => slack.prompts(first).length === 2);
    const posts = slack.callsTo('chat.postMessage').filter((m) => m.channel === first);
    expect(posts.map((m) => (isPrompt(m) ? 'prompt' : 'reply'))).toEqual([
      'prompt',
      'reply',
      'prompt',
    ]);
    // Its row is parked once its prompt is out.
    await expect
      .poll(async () => (await waiting()).filter((r) => r.status === 'waiting').length)
      .toBe(50);
    await expect.poll(async () => (await waiting()).filter((r) => r.lane?.holder).length).toBe(0);
  });

  it("posts Approve and Deny, runs nothing on a non-approver's click, and runs once on an approver's double click", async () => {
    const before = lookup.calls.length;
    const ch = await ask('1900.1');
    const prompt = slack.prompts(ch)[0]!;
    expect(prompt).toMatchObject({ threadTs: '1900.1', text: expect.stringContaining('`lookup`') });
    expect(prompt.text).toContain('"sku": "SKU-9"');
    expect((await click(ch, 'U1', 'spool_approve')).status).toBe(200);
    await slack.waitFor(() =>
      slack.callsTo('response_url').some((c) => String(c.text).includes('not allowed')),
    );
    expect(
      slack.callsTo('response_url').find((c) => String(c.text).includes('not allowed')),
    ).toMatchObject({ response_type: 'ephemeral' });
    expect(await approvalRow(prompt.toolCallId)).toMatchObject({
      approval: 'pending',
      approvalBy: null,
      runStartedAt: null,
    });
    expect(lookup.calls.length).toBe(before);
    const clicks = await Promise.all([
      click(ch, 'U9', 'spool_approve'),
      click(ch, 'U9', 'spool_approve'),
    ]);
    expect(clicks.map((r) => r.status)).toEqual([200, 200]);
    await slack.waitFor(() => replyIn(ch) !== undefined);
    expect(replyIn(ch)!.text).toBe('tool said: inventory for SKU-9: 42 units in warehouse-7');
    expect(lookup.calls.length - before).toBe(1);
    expect(
      slack
        .callsTo('response_url')
        .some((c) => String(c.text) === 'This call was already approved by <@U9>.'),
    ).toBe(true);
    const row = await approvalRow(prompt.toolCallId);
    expect(row).toMatchObject({ approval: 'approved', approvalBy: 'U9' });
    expect(row.runStartedAt).not.toBeNull();
    const update = slack.callsTo('chat.update').find((c) => c.channel === ch)!;
    expect(update.ts).toBe(prompt.ts);
    expect(update.text).toMatch(
      /^✅ Approved by <@U9> at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: `lookup`\.$/,
    );
    expect(JSON.parse(String(update.blocks))).toEqual([]);
  });

  it('gives the model a denial it tells the user about, and the prompt says who denied it', async () => {
    const before = lookup.calls.length;
    const ch = await ask('1901.1');
    await click(ch, 'U9', 'spool_deny');
    await slack.waitFor(() => replyIn(ch) !== undefined);
    expect(replyIn(ch)!.text).toContain('The call was not run: <@U9> denied it.');
    expect(lookup.calls.length).toBe(before);
    expect(await approvalRow(slack.prompts(ch)[0]!.toolCallId)).toMatchObject({
      approval: 'denied',
      approvalBy: 'U9',
      runStartedAt: null,
    });
    await slack.waitFor(() => slack.callsTo('chat.update').some((c) => c.channel === ch));
    expect(slack.callsTo('chat.update').find((c) => c.channel === ch)!.text).toMatch(
      /^❌ Denied by <@U9> at /,
    );
    // Recall shows the decision with the call.
    const fields = {
      command: '/spool',
      text: 'recall sku',
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U1',
      response_url: slack.responseUrl(`recall-${ch}`),
      trigger_id: 't',
    };
    await started.command(fields);
    await slack.waitFor(() =>
      slack.callsTo('response_url').some((c) => String(c.text).includes('TOOL CALL lookup')),
    );
    expect(
      String(
        slack.callsTo('response_url').find((c) => String(c.text).includes('TOOL CALL lookup'))!
          .text,
      ),
    ).toMatch(/approval: denied by U9 at \d{4}-/);
  });

  it('denies a call nobody decides on in time, with a reason the model reads', async () => {
    // The only engine meanwhile: the describe's, a replica on the same database, takes the lane
    // when its poll comes between the message's recording and this engine's taking it, and asks
    // for the approval with its own timeout (ten minutes: no reply within the wait).
    await started.stop();
    const quick = await startAdapter(
      { allowedUsers: ['U1', 'U9'] },
      db,
      {},
      { policy, approvalTimeoutMs: 1_000 },
    );
    try {
      const before = lookup.calls.length;
      const ch = channel();
      await quick.event(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> stock?`,
          ts: '1902.1',
          channel: ch,
        }),
      );
      await slack.waitFor(() => replyIn(ch) !== undefined);
      expect(replyIn(ch)!.text).toContain('nobody approved it within 1 second');
      expect(lookup.calls.length).toBe(before);
      expect(await approvalRow(slack.prompts(ch)[0]!.toolCallId)).toMatchObject({
        approval: 'expired',
        approvalBy: null,
      });
    } finally {
      await quick.stop();
      await startWithPolicy();
    }
  });

  it('Stop ends a thread awaiting approval: its prompt says it was stopped, with no buttons, and a late click is told so privately; the call never runs', async () => {
    const before = lookup.calls.length;
    const ch = await ask('1904.1');
    const prompt = slack.prompts(ch)[0]!;
    await post(
      eventBody({
        type: 'agent_session_stopped',
        channel: ch,
        thread_ts: '1904.1',
        user: 'U1',
        streaming_message_ts: [],
        ts: '1904.2',
      } as never),
    );
    await slack.waitFor(() => slack.callsTo('chat.update').some((c) => c.ts === prompt.ts));
    const update = slack.callsTo('chat.update').find((c) => c.ts === prompt.ts)!;
    expect(update).toMatchObject({ channel: ch, text: STOPPED_PROMPT });
    expect(JSON.parse(String(update.blocks))).toEqual([]);
    await slack.waitFor(() => replyIn(ch) !== undefined);
    expect(replyIn(ch)!.text).toBe(STOPPED_REPLY);
    await click(ch, 'U9', 'spool_approve');
    await slack.waitFor(() =>
      slack.callsTo('response_url').some((c) => c.text === STOPPED_CLICK_REPLY),
    );
    expect(slack.callsTo('response_url').find((c) => c.text === STOPPED_CLICK_REPLY)).toMatchObject(
      { response_type: 'ephemeral' },
    );
    expect(await approvalRow(prompt.toolCallId)).toMatchObject({
      approval: 'denied',
      runStartedAt: null,
    });
    expect(lookup.calls.length).toBe(before);
  });

  it('takes a click over Socket Mode', async () => {
    const overSocket = await startAdapter(
      { appToken: 'xapp-test', signingSecret: undefined },
      db,
      {},
      { policy },
    );
    try {
      const ch = channel();
      await slack.sendSocketEvent(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> stock?`,
          ts: '1903.1',
          channel: ch,
        }),
      );
      await slack.waitFor(() => slack.prompts(ch).length === 1);
      const prompt = slack.prompts(ch)[0]!;
      await slack.sendSocketInteraction(
        buttonClick({
          user: 'U9',
          channel: ch,
          messageTs: prompt.ts,
          threadTs: prompt.threadTs,
          actionId: 'spool_approve',
          value: prompt.toolCallId,
          responseUrl: slack.responseUrl('socket'),
        }),
      );
      await slack.waitFor(() => replyIn(ch) !== undefined);
      expect(replyIn(ch)!.text).toBe('tool said: inventory for SKU-9: 42 units in warehouse-7');
    } finally {
      await overSocket.stop();
    }
  });
});

describe('bad input from Slack', () => {
  let started: Started;
  const post = (body: unknown) => started.event(body);
  const interact = (payload: unknown) => started.interaction(payload);
  const repliesIn = (ch: string) =>
    slack.callsTo('chat.postMessage').filter((m) => m.channel === ch);

  beforeAll(async () => {
    started = await startAdapter();
  });
  afterAll(() => started.stop());
  beforeEach(() => {
    slack.calls.length = 0;
  });

  it('acknowledges an event it can never store with 200, stores nothing, and answers the next message', async () => {
    const ch = channel();
    llm.fallback = (request) => ({ content: `answer to ${userTexts(request).at(-1)}` });
    const malformed = [
      eventBody({ type: 'app_mention', user: 'U1', text: `<@${BOT_USER}> no channel`, ts: '1.1' }),
      eventBody({ type: 'app_mention', user: 'U1', text: `<@${BOT_USER}> no ts`, channel: ch }),
      {
        ...eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> no team`,
          ts: '1.3',
          channel: ch,
        }),
        team_id: undefined,
      },
      eventBody({
        type: 'message',
        channel_type: 'im',
        user: 'U1',
        text: 42,
        ts: '1.4',
        channel: ch,
      }),
      eventBody({
        type: 'message',
        channel_type: 'im',
        user: 'U1',
        text: { words: 'an object' },
        ts: '1.5',
        channel: ch,
      }),
      { ...eventBody({}), event: null },
      { type: 'event_callback', team_id: TEAM },
    ];
    for (const body of malformed) expect((await post(body)).status).toBe(200);
    expect(
      await post(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> still there?`,
          ts: '1.9',
          channel: ch,
        }),
      ),
    ).toMatchObject({ status: 200 });
    await slack.waitFor(() => repliesIn(ch).length === 1);
    expect(repliesIn(ch).map((m) => m.text)).toEqual(['answer to still there?']);
    expect(
      await db.prisma.inboxEntry.count({ where: { messageKey: { startsWith: `${ch}:` } } }),
    ).toBe(1);
  });

  it("acknowledges a click on another app's button within Slack's 3 seconds, posting nothing", async () => {
    const ch = channel();
    const click = buttonClick({
      user: 'U1',
      channel: ch,
      messageTs: '2.1',
      threadTs: '2.1',
      actionId: 'another_apps_button',
      value: 'v',
      responseUrl: slack.responseUrl('other'),
    });
    const shortcut = {
      type: 'shortcut',
      token: 'verification-token',
      action_ts: '2.2',
      team: { id: TEAM },
      user: { id: 'U1' },
      callback_id: 'not_ours',
      trigger_id: 't',
    };
    for (const payload of [click, shortcut]) {
      const started = Date.now();
      expect((await interact(payload)).status).toBe(200);
      // Slack counts a request unanswered after 3 seconds as a failure, and retries it.
      expect(Date.now() - started).toBeLessThan(3_000);
    }
    expect(slack.callsTo('response_url')).toEqual([]);
    expect(repliesIn(ch)).toEqual([]);
  });
});

describe('usage and spend caps in Slack', () => {
  const PRICES = { 'fake-model': { input: 2, cachedInput: 1, output: 8 } };
  /** A request's price as the fake model reported it, per million tokens. */
  const priceOf = (u: ServedUsage) =>
    ((u.prompt_tokens - u.prompt_tokens_details.cached_tokens) * 2 +
      u.prompt_tokens_details.cached_tokens * 1 +
      u.completion_tokens * 8) /
    1_000_000;
  const servedFor = (text: string) =>
    llm.served.filter((s) => s.request.messages.some((m) => m.content?.endsWith(text)));

  it('counts each person’s tokens and spend, shows them with /spool usage (everything to an admin), and refuses a turn past a cap, naming it', async () => {
    const [general, capped] = [channel(), channel()];
    const policy = {
      rules: [],
      prices: PRICES,
      currency: 'EUR',
      admins: ['UADMIN'],
      caps: [
        { per: 'channel' as const, period: 'day' as const, tokens: 1, match: { channel: capped } },
      ],
    };
    const started = await startAdapter(
      { allowedUsers: ['U7', 'U8', 'UADMIN'] },
      db,
      {},
      { policy },
    );
    const post = (body: Record<string, unknown>) => started.event(body);
    const usage = async (user: string, at: string, text = 'usage') => {
      const url = slack.responseUrl(`${text}-${at}-${user}`);
      const before = slack.callsTo('response_url').length;
      await started.command({
        command: '/spool',
        text,
        team_id: TEAM,
        channel_id: at,
        user_id: user,
        response_url: url,
        trigger_id: 't',
      });
      await slack.waitFor(() => slack.callsTo('response_url').length > before);
      return slack.callsTo('response_url')[before]!;
    };
    const mention = (user: string, ch: string, ts: string, text: string) =>
      post(
        eventBody({ type: 'app_mention', user, text: `<@${BOT_USER}> ${text}`, ts, channel: ch }),
      );
    const repliesIn = (ch: string) =>
      slack
        .callsTo('chat.postMessage')
        .filter((m) => m.channel === ch)
        .map((m) => String(m.text));
    try {
      llm.fallback = (request) =>
        request.messages.at(-1)!.role === 'user'
          ? { toolCalls: [{ id: 'l', name: 'lookup', arguments: '{"sku":"SKU-9"}' }] }
          : { content: 'nine units' };
      await mention('U7', general, '3100.1', 'usage check from U7');
      await mention('U8', general, '3101.1', 'usage check from U8');
      await slack.waitFor(() => repliesIn(general).length === 2);
      const mine = servedFor('usage check from U7');
      const theirs = servedFor('usage check from U8');
      // A tool call, then the answer: two requests each, both counted.
      expect([mine.length, theirs.length]).toEqual([2, 2]);
      const tokens = (served: typeof mine) => served.reduce((n, s) => n + s.usage.total_tokens, 0);
      const cost = (served: typeof mine) => served.reduce((n, s) => n + priceOf(s.usage), 0);
      const rows = await until(async () => {
        const found = await db.prisma.llmUsage.findMany({
          where: { platform: 'slack', workspace: TEAM, channel: general },
          orderBy: { id: 'asc' },
        });
        return found.length === 4 ? found : undefined;
      });
      const byResponse = (a: string[], b: string[]) => a[1]!.localeCompare(b[1]!);
      expect(rows.map((r) => [r.userId!, r.responseId!]).sort(byResponse)).toEqual(
        [...mine.map((s) => ['U7', s.id]), ...theirs.map((s) => ['U8', s.id])].sort(byResponse),
      );
      for (const s of [...mine, ...theirs]) {
        const row = rows.find((r) => r.responseId === s.id)!;
        expect(row).toMatchObject({
          promptTokens: s.usage.prompt_tokens,
          cachedPromptTokens: s.usage.prompt_tokens_details.cached_tokens,
          completionTokens: s.usage.completion_tokens,
          reasoningTokens: s.usage.completion_tokens_details.reasoning_tokens,
          totalTokens: s.usage.total_tokens,
        });
        expect(Number(row.cost)).toBeCloseTo(priceOf(s.usage), 9);
      }

      const own = await usage('U7', general);
      expect(own).toMatchObject({ response_type: 'ephemeral' });
      const money = (n: number) => `${n.toFixed(2)} EUR`;
      expect(String(own.text)).toContain('*Your usage here*');
      expect(String(own.text)).toContain(`Today: ${tokens(mine)} tokens · ${money(cost(mine))}`);
      expect(String(own.text)).toContain(`• <#${general}>: ${tokens(mine)} tokens`);
      expect(String(own.text)).not.toContain('<@U8>');

      const everyone = String((await usage('UADMIN', general)).text);
      expect(everyone).toContain('*This month by person*');
      expect(everyone).toContain(`• <@U7>: ${tokens(mine)} tokens`);
      expect(everyone).toContain(`• <@U8>: ${tokens(theirs)} tokens`);

      // Words it does not take are named, with what it takes, instead of being ignored.
      const unknown = await usage('U7', general, 'usage last month');
      expect(unknown.response_type).toBe('ephemeral');
      expect(String(unknown.text)).toMatch(/^I did not understand "last month": .*`chart`/);

      // `usage chart`: the text, then the 30 days' chart as a PNG in a direct message.
      await usage('U7', general, 'usage chart');
      await slack.waitFor(() =>
        slack.callsTo('response_url').some((c) => String(c.text).startsWith('Sent you the chart')),
      );
      const [shared] = slack
        .callsTo('files.completeUploadExternal')
        .filter((c) => c.channel_id === 'DU7');
      const [file] = JSON.parse(String(shared!.files)) as Array<{ id: string }>;
      const png = slack.uploads.get(file!.id)!;
      expect(png.filename).toBe('usage.png');
      expect(png.bytes!.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));

      // The capped channel: its first turn starts under the cap, and its first request passes
      // it; so the turn stops before its next request, with the tool's result kept. The next
      // message is refused before the model is asked, its message kept.
      await mention('U7', capped, '3102.1', 'first in the capped channel');
      await slack.waitFor(() => repliesIn(capped).length === 1);
      expect(repliesIn(capped)[0]).toMatch(
        /^This channel has reached its cap of 1 tokens a day \([\d,]+ tokens used\)\. It resets at 00:00 UTC, in .+\n\nI stopped here: what I did so far is kept, and I can go on once the cap resets\.$/,
      );
      expect(servedFor('first in the capped channel')).toHaveLength(1);
      expect(
        await db.prisma.toolResult.count({ where: { channelKey: { contains: capped } } }),
      ).toBe(1);
      const asked = llm.requests.length;
      await mention('U7', capped, '3103.1', 'second in the capped channel');
      await slack.waitFor(() => repliesIn(capped).length === 2);
      expect(repliesIn(capped)[1]).toMatch(
        /^This channel has reached its cap of 1 tokens a day \([\d,]+ tokens used\)\. It resets at 00:00 UTC, in \d+ (h \d+ )?min\.$/,
      );
      expect(llm.requests.length).toBe(asked);
      expect(
        await db.prisma.transcriptMessage.count({
          where: { content: 'second in the capped channel', role: 'user' },
        }),
      ).toBe(1);
      expect(
        await db.prisma.spendHold.count({ where: { channel: { in: [general, capped] } } }),
      ).toBe(0);
    } finally {
      llm.fallback = undefined;
      await started.stop();
    }
  });
});
