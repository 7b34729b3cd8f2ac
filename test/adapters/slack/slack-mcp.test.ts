import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryOptions } from '../../../src/core/delivery/engine/engine.ts';
import type { Database } from '../../../src/store/database.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { testAgent } from '../../support/agent.ts';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import { STALE_ANSWERS_NOTE } from '../../../src/core/delivery/posts/replies.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { type ChatRequest, FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { BOT_USER, TEAM, buttonClick, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { silentLogger } from '../../support/logger.ts';
import { until } from '../../support/process.ts';
import { serveSlackAdapter } from '../../support/slack-spool.ts';

/**
 * A tool server's questions (MCP elicitation, form mode) and prompts, with people on Slack: the
 * official everything server over stdio, through a real Spool Slack adapter over signed HTTP.
 */
const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const ASK = 'everything__trigger-elicitation-request';

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let source: McpToolSource;

/** A bot over signed HTTP, or over Socket Mode (`socket`): its events come through the fake's socket. */
async function startBot(options: Partial<DeliveryOptions> = {}, socket = false) {
  const store = testStore(db);
  const agent = testAgent({ fake: llm, store, sources: [source] });
  const pipeline = testEngine(db, agent, options, { prompts: source });
  const served = await serveSlackAdapter(pipeline, {
    apiUrl: slack.apiUrl,
    ...(socket ? { appToken: 'xapp-test' } : {}),
  });
  return {
    event: (event: Record<string, unknown>) =>
      socket
        ? slack.sendSocketEvent(eventBody(event as never))
        : served.event(eventBody(event as never)),
    mention: (channel: string, ts: string) =>
      served.event(
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> sign me up`,
          ts,
          channel,
        }),
      ),
    click: served.interaction,
    command: served.command,
    stop: served.stop,
  };
}

/** The model's call of the everything server's long operation. */
const longCall = (duration: number, steps: number) => ({
  toolCalls: [
    {
      id: 'long',
      name: 'everything__trigger-long-running-operation',
      arguments: JSON.stringify({ duration, steps }),
    },
  ],
});
const channel = () => `C${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
/** The scripted model: it calls the asking tool, then says what the tool returned. */
const lastToolResult = (request: ChatRequest) =>
  request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
  const config = parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], timeoutMs: 2_000 },
      },
    }),
    join(tmpdir(), 'mcp.json'),
    process.env,
    new Set(),
  );
  source = await McpToolSource.start(config, silentLogger, {
    maxMessageBytes: 10_485_760,
    binaryMaxBytes: 1_000_000,
  });
  llm.fallback = (request) =>
    request.messages.some((m) => m.role === 'tool')
      ? { content: `tool said: ${lastToolResult(request)}` }
      : { toolCalls: [{ id: 'ask', name: ASK, arguments: '{}' }] };
});
afterAll(async () => {
  await source.close();
  await slack.stop();
  await llm.stop();
  await db.close();
});

const replyIn = (ch: string) =>
  slack
    .callsTo('chat.postMessage')
    .find((m) => m.channel === ch && String(m.text).startsWith('tool said'));
const responses = (id: string) => slack.responses(id);
const questionRow = (id: string) => db.prisma.question.findUniqueOrThrow({ where: { id } });

describe('a question a tool asks, over Slack', () => {
  let bot: Awaited<ReturnType<typeof startBot>>;
  beforeAll(async () => {
    bot = await startBot();
  });
  afterAll(() => bot.stop());

  it('asks the person who started the turn in a form, takes only their answer, names what to correct, and the server gets it with its defaults', async () => {
    const ch = channel();
    await bot.mention(ch, '3001.1');
    await slack.waitFor(() => slack.prompts(ch).length === 1);
    const prompt = slack.prompts(ch)[0]!;
    expect(prompt.text).toBe(
      '`everything` asks <@U1>: Please provide inputs for the following fields:',
    );
    const inputs = prompt.blocks.filter((b) => b.type === 'input');
    expect(inputs.map((b) => b.block_id)).toContain('spool_field:name');
    expect(inputs).toHaveLength(13);
    const click = (user: string, actionId: string, url: string, state?: object) =>
      bot.click(
        buttonClick({
          user,
          channel: ch,
          messageTs: prompt.ts,
          threadTs: prompt.threadTs,
          actionId,
          value: prompt.toolCallId,
          responseUrl: slack.responseUrl(url),
          ...(state ? { state: state as Record<string, Record<string, unknown>> } : {}),
        }),
      );
    const field = (value: unknown) => ({ value });

    await click('U2', 'spool_form_submit', `${ch}-other`);
    await slack.waitFor(() => responses(`${ch}-other`).length === 1);
    expect(responses(`${ch}-other`)).toEqual([
      'Only the person whose message started this can answer it.',
    ]);

    await click('U1', 'spool_form_submit', `${ch}-wrong`, {
      'spool_field:integer': field({ type: 'number_input', value: '500' }),
      'spool_field:email': field({ type: 'plain_text_input', value: 'not an address' }),
    });
    await slack.waitFor(() => responses(`${ch}-wrong`).length === 1);
    expect(responses(`${ch}-wrong`)[0]).toBe(
      'Nothing was sent yet. Please correct:\n• String: required\n• String with email format: an email address\n• Integer: at most 100',
    );
    expect((await questionRow(prompt.toolCallId)).status).toBe('open');

    await click('U1', 'spool_form_submit', `${ch}-ok`, {
      'spool_field:name': field({ type: 'plain_text_input', value: 'Ada Lovelace' }),
      'spool_field:check': field({ type: 'static_select', selected_option: { value: 'yes' } }),
      'spool_field:integer': field({ type: 'number_input', value: '7' }),
      'spool_field:untitledMultipleSelectEnum': field({
        type: 'multi_static_select',
        selected_options: [{ value: 'Piano' }, { value: 'Drums' }],
      }),
    });
    await slack.waitFor(() => replyIn(ch) !== undefined);
    const reply = String(replyIn(ch)!.text);
    // The server's own account of what it got (its "Raw result").
    const got = JSON.parse(reply.slice(reply.indexOf('{'))) as Record<string, unknown>;
    expect(got).toEqual({
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        integer: 7,
        untitledMultipleSelectEnum: ['Piano', 'Drums'],
        // What was left empty, the server's defaults fill in (the client's applyDefaults).
        firstLine: 'It was a dark and stormy night.',
        number: 3.14,
        untitledSingleSelectEnum: 'Monica',
        titledSingleSelectEnum: 'hero-1',
        titledMultipleSelectEnum: ['fish-1'],
        legacyTitledEnum: 'pet-1',
      },
    });
    expect(await questionRow(prompt.toolCallId)).toMatchObject({
      status: 'accept',
      answeredBy: 'U1',
      content: expect.objectContaining({ name: 'Ada Lovelace', integer: 7 }),
    });
    // The prompt now says who answered, without its inputs, and without repeating the answer.
    const update = slack.callsTo('chat.update').find((u) => u.ts === prompt.ts)!;
    expect(update.text).toBe(
      '✅ Answered by <@U1>: `everything` asked "Please provide inputs for the following fields:"',
    );
    // A late click changes nothing.
    await click('U1', 'spool_form_decline', `${ch}-late`);
    await slack.waitFor(() => responses(`${ch}-late`).length === 1);
    expect(responses(`${ch}-late`)).toEqual(['This question was already answered by <@U1>.']);
  });

  it('shows a page to open by its host, as a link button "Open <host>" whose click is the answer', async () => {
    const asks = llm.fallback;
    llm.fallback = (request) =>
      request.messages.some((m) => m.role === 'tool')
        ? { content: `tool said: ${lastToolResult(request)}` }
        : {
            toolCalls: [
              {
                id: 'page',
                name: 'everything__trigger-url-elicitation',
                arguments: JSON.stringify({ url: 'https://pay.example.com/x', message: 'Pay.' }),
              },
            ],
          };
    try {
      const ch = channel();
      await bot.mention(ch, '3003.1');
      await slack.waitFor(() => slack.prompts(ch).length === 1);
      const prompt = slack.prompts(ch)[0]!;
      expect(prompt.text).toBe('`everything` asks <@U1> to open a page on pay.example.com: Pay.');
      expect(prompt.blocks.map((b) => b.type)).toEqual(['section', 'actions']);
      const [open] = (prompt.blocks[1] as { elements: Array<Record<string, unknown>> }).elements;
      expect(open).toMatchObject({
        text: { text: 'Open pay.example.com' },
        url: 'https://pay.example.com/x',
        action_id: 'spool_form_submit',
      });
      await bot.click(
        buttonClick({
          user: 'U1',
          channel: ch,
          messageTs: prompt.ts,
          threadTs: prompt.threadTs,
          actionId: 'spool_form_submit',
          value: prompt.toolCallId,
          responseUrl: slack.responseUrl(`${ch}-open`),
        }),
      );
      await slack.waitFor(() => replyIn(ch) !== undefined);
      expect(String(replyIn(ch)!.text)).toContain('✅ User completed the URL elicitation flow.');
      expect(slack.responses(`${ch}-open`)).toEqual([]);
    } finally {
      llm.fallback = asks;
    }
  });

  it('takes the answer on another replica: the cancel reaches the server that asked', async () => {
    const other = await startBot();
    try {
      const ch = channel();
      await bot.mention(ch, '3002.1');
      await slack.waitFor(() => slack.prompts(ch).length === 1);
      const prompt = slack.prompts(ch)[0]!;
      await other.click(
        buttonClick({
          user: 'U1',
          channel: ch,
          messageTs: prompt.ts,
          threadTs: prompt.threadTs,
          actionId: 'spool_form_cancel',
          value: prompt.toolCallId,
          responseUrl: slack.responseUrl(`${ch}-cancel`),
        }),
      );
      await slack.waitFor(() => replyIn(ch) !== undefined);
      expect(String(replyIn(ch)!.text)).toContain('User cancelled the elicitation dialog');
      expect(await questionRow(prompt.toolCallId)).toMatchObject({
        status: 'cancel',
        answeredBy: 'U1',
      });
      expect(slack.responses(`${ch}-cancel`)).toEqual([]);
    } finally {
      await other.stop();
    }
  });
});

it('declines a question nobody answers in time, and the call is not cut short meanwhile', async () => {
  // The call's own limit is 2 s of silence; the person had 3 s, which the clock does not count.
  const bot = await startBot({ questionTimeoutMs: 3_000 });
  try {
    const ch = channel();
    await bot.mention(ch, '3003.1');
    await slack.waitFor(() => replyIn(ch) !== undefined, 15_000);
    expect(String(replyIn(ch)!.text)).toContain(
      'User declined to provide the requested information',
    );
    const [prompt] = slack.prompts(ch);
    expect(await questionRow(prompt!.toolCallId)).toMatchObject({
      status: 'expired',
      answeredBy: null,
    });
    expect(slack.callsTo('chat.update').find((u) => u.ts === prompt!.ts)!.text).toBe(
      '⌛ No answer in time, so declined: `everything` asked "Please provide inputs for the following fields:"',
    );
  } finally {
    await bot.stop();
  }
});

describe("a tool server's prompts, as /spool prompt", () => {
  let bot: Awaited<ReturnType<typeof startBot>>;
  beforeAll(async () => {
    bot = await startBot();
  });
  afterAll(() => bot.stop());
  const prompt = (ch: string, text: string) =>
    bot.command({
      command: '/spool',
      text: `prompt ${text}`,
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U1',
      response_url: slack.responseUrl(`prompt-${ch}`),
      trigger_id: 't',
    });

  it('lists the prompts privately, names a missing argument, and answers a prompt in a thread of its own', async () => {
    const ch = channel();
    const asked = llm.requests.length;
    await prompt(ch, '');
    await prompt(ch, 'everything args-prompt');
    await slack.waitFor(() => slack.responses(`prompt-${ch}`).length === 2);
    const [list, missing] = slack.responses(`prompt-${ch}`);
    expect(list).toContain('• `everything simple-prompt`: A prompt with no arguments');
    expect(missing).toBe(
      '`everything args-prompt`: it needs city. Usage: `everything args-prompt city=… [state=…]`',
    );
    llm.enqueue((request) => ({ content: `heard: ${request.messages.at(-1)!.content}` }));
    await prompt(ch, 'everything args-prompt city=Oslo');
    await slack.waitFor(() =>
      slack.callsTo('chat.postMessage').some((m) => m.channel === ch && m.thread_ts),
    );
    const [anchor, reply] = slack.calls.filter(
      (c) => c.method === 'chat.postMessage' && c.args.channel === ch,
    );
    expect(anchor!.args).toMatchObject({
      text: '<@U1> asked with the prompt `everything args-prompt`.',
    });
    expect(anchor!.args.thread_ts).toBeUndefined();
    // The answer is in the thread the anchor starts.
    expect(reply!.args).toMatchObject({
      text: "heard: What's weather in Oslo?",
      thread_ts: slack.tsOf(anchor!),
    });
    expect(llm.requests.length - asked).toBe(1);
  });
});

describe('a status line while Spool works', () => {
  it('names the running tool and its progress, at most once a second, and nothing after the reply', async () => {
    const bot = await startBot();
    try {
      const ch = channel();
      llm.enqueue(longCall(3, 3), (request) => ({
        content: `tool said: ${lastToolResult(request)}`,
      }));
      await bot.mention(ch, '3101.1');
      await slack.waitFor(() => replyIn(ch) !== undefined);
      const statuses = slack.calls.filter(
        (c) => c.method === 'assistant.threads.setStatus' && c.args.channel_id === ch,
      );
      const said = statuses.map((c) => c.args.status);
      expect(said[0]).toBe('is thinking…');
      expect(said).toContain('is running everything__trigger-long-running-operation…');
      expect(said).toContainEqual(
        expect.stringMatching(/^is running everything__trigger-long-running-operation \(\d+%\)…$/),
      );
      // At most one a second (counted over the turn: each one's arrival is less regular).
      const span = statuses.at(-1)!.at - statuses[0]!.at;
      expect(statuses.length).toBeLessThanOrEqual(Math.ceil(span / 1_000) + 1);
      // Nothing is shown once the turn is over: the next message's quick turn shows its own
      // "thinking" and nothing after it (a status timed after the first turn would come later).
      llm.enqueue({ content: 'done' });
      await bot.mention(ch, '3101.2');
      await slack.waitFor(() =>
        slack.callsTo('chat.postMessage').some((m) => m.channel === ch && m.text === 'done'),
      );
      const after = slack.calls.filter(
        (c) => c.method === 'assistant.threads.setStatus' && c.args.channel_id === ch,
      );
      expect(after.at(-1)!.args.status).toBe('is thinking…');
      expect(after.length).toBeGreaterThan(statuses.length);
    } finally {
      await bot.stop();
    }
  });
});

describe("the agent session's Stop", () => {
  it('stops the turn within a second or so on another replica, keeps what it did, and says so; a late Stop posts nothing', async () => {
    const bot = await startBot();
    const other = await startBot();
    try {
      const ch = channel();
      llm.enqueue(longCall(30, 30));
      await bot.mention(ch, '3201.1');
      const sessions = () =>
        slack
          .callsTo('agents.sessions.setStatus')
          .filter((c) => c.channel_id === ch)
          .map((c) => c.status);
      await slack.waitFor(() =>
        slack
          .callsTo('assistant.threads.setStatus')
          .some((c) => c.channel_id === ch && String(c.status).startsWith('is running')),
      );
      expect(sessions()).toEqual(['processing']);
      expect(
        slack.callsTo('agents.sessions.setStatus').find((c) => c.channel_id === ch),
      ).toMatchObject({
        thread_ts: '3201.1',
        title: 'sign me up',
      });
      const stopped = Date.now();
      await other.event({
        type: 'agent_session_stopped',
        channel: ch,
        thread_ts: '3201.1',
        user: 'U1',
        streaming_message_ts: [],
        event_ts: '3201.2',
      });
      await slack.waitFor(() =>
        slack.callsTo('chat.postMessage').some((m) => m.channel === ch && m.text === STOPPED_REPLY),
      );
      expect(Date.now() - stopped).toBeLessThan(5_000);
      await slack.waitFor(() => sessions().length === 2);
      expect(sessions()).toEqual(['processing', 'active']);
      // The note is out before the row says so: wait on the row.
      const row = await until(() =>
        db.prisma.inboxEntry
          .findFirstOrThrow({ where: { messageKey: `${ch}:3201.1` } })
          .then((r) => (r.status === 'answered' ? r : undefined)),
      );
      expect(row.stoppedBy).toBe('U1');
      // A Stop after the answer: nothing more is posted; the session is told it is not working.
      await other.event({
        type: 'agent_session_stopped',
        channel: ch,
        thread_ts: '3201.1',
        user: 'U1',
        streaming_message_ts: [],
        event_ts: '3201.3',
      });
      await slack.waitFor(() => sessions().length === 3);
      expect(sessions()).toEqual(['processing', 'active', 'active']);
      expect(slack.callsTo('chat.postMessage').filter((m) => m.channel === ch)).toHaveLength(1);
    } finally {
      await Promise.all([bot.stop(), other.stop()]);
    }
  });
});

/** An edit as Slack reports it (the shape of bolt-python's message_changed scenario). */
const changed = (
  channel: string,
  ts: string,
  was: string,
  now: string,
  editedTs: string,
  user = 'U1',
) => ({
  type: 'message',
  subtype: 'message_changed',
  hidden: true,
  channel,
  channel_type: 'channel',
  ts: editedTs,
  event_ts: editedTs,
  message: {
    type: 'message',
    user,
    text: now,
    ts,
    edited: { user, ts: editedTs },
  },
  previous_message: { type: 'message', user: 'U1', text: was, ts },
});
const deleted = (channel: string, ts: string, was: string, eventTs: string) => ({
  type: 'message',
  subtype: 'message_deleted',
  hidden: true,
  channel,
  channel_type: 'channel',
  ts: eventTs,
  event_ts: eventTs,
  deleted_ts: ts,
  previous_message: { type: 'message', user: 'U1', text: was, ts },
});

it("takes the session's Stop over Socket Mode", async () => {
  const bot = await startBot({}, true);
  try {
    const ch = channel();
    llm.enqueue(longCall(30, 30));
    await bot.event({
      type: 'app_mention',
      user: 'U1',
      text: `<@${BOT_USER}> take your time`,
      ts: '3501.1',
      channel: ch,
    });
    await slack.waitFor(() =>
      slack
        .callsTo('assistant.threads.setStatus')
        .some((c) => c.channel_id === ch && String(c.status).startsWith('is running')),
    );
    await bot.event({
      type: 'agent_session_stopped',
      channel: ch,
      thread_ts: '3501.1',
      user: 'U1',
      streaming_message_ts: [],
      ts: '3501.2',
    });
    await slack.waitFor(() =>
      slack.callsTo('chat.postMessage').some((m) => m.channel === ch && m.text === STOPPED_REPLY),
    );
    expect(slack.callsTo('chat.postMessage').filter((m) => m.channel === ch)).toHaveLength(1);
  } finally {
    await bot.stop();
  }
});

it('replaces a file answer when its question is edited: the new file is posted, the old one deleted', async () => {
  const bot = await startBot({ replyFileChars: 20 });
  try {
    const ch = channel();
    const long = (request: ChatRequest) => ({
      content: `a long answer to: ${lastUserText(request)}, at length`,
    });
    const uploads = () =>
      slack.callsTo('files.completeUploadExternal').filter((c) => c.channel_id === ch);
    const fileIds = () =>
      uploads().map(
        (c) =>
          (
            (typeof c.files === 'string' ? JSON.parse(c.files) : c.files) as Array<{ id: string }>
          )[0]!.id,
      );
    llm.enqueue(long);
    await bot.mention(ch, '3601.1');
    await slack.waitFor(() => uploads().length === 1);
    llm.enqueue(long);
    await bot.event(
      changed(ch, '3601.1', `<@${BOT_USER}> sign me up`, `<@${BOT_USER}> sign me out`, '3601.5'),
    );
    await slack.waitFor(() => slack.callsTo('files.delete').some((c) => c.file === fileIds()[0]));
    expect(uploads()).toHaveLength(2);
    expect(slack.uploads.get(fileIds()[1]!)!.body).toBe('a long answer to: sign me out, at length');
    expect(slack.callsTo('files.delete').map((c) => c.file)).toEqual([fileIds()[0]]);
  } finally {
    await bot.stop();
  }
});

describe('edits and deletions', () => {
  let bot: Awaited<ReturnType<typeof startBot>>;
  beforeAll(async () => {
    bot = await startBot();
  });
  afterAll(() => bot.stop());
  const posts = (ch: string) =>
    slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === ch);
  const echo = (request: ChatRequest) => ({
    content: `answer to: ${lastUserText(request)}`,
  });

  it("runs an answered question again on each edit its author makes, replacing the answer in place, once however often an edit arrives; others' edits are not followed; an older question is answered again in place with a note that the later answers may be stale", async () => {
    const ch = channel();
    llm.enqueue(echo);
    await bot.mention(ch, '3301.1');
    await slack.waitFor(() => posts(ch).length === 1);
    const [answer] = posts(ch);
    const updates = () => slack.callsTo('chat.update').filter((u) => u.ts === slack.tsOf(answer!));
    const edit = changed(
      ch,
      '3301.1',
      `<@${BOT_USER}> sign me up`,
      `<@${BOT_USER}> sign me out`,
      '3301.5',
    );
    llm.enqueue(echo);
    await bot.event(edit);
    await bot.event(edit);
    await slack.waitFor(() => updates().length === 1);
    expect(updates()[0]).toMatchObject({ channel: ch, text: 'answer to: sign me out' });
    expect(posts(ch)).toHaveLength(1);
    expect(
      await db.prisma.inboxEntry.count({ where: { messageKey: `${ch}:3301.1:edited:3301.5` } }),
    ).toBe(1);
    // A second edit of the same message is followed too, from the answer now on screen.
    llm.enqueue(echo);
    await bot.event(
      changed(ch, '3301.1', `<@${BOT_USER}> sign me out`, `<@${BOT_USER}> sign me in`, '3301.6'),
    );
    await slack.waitFor(() => updates().length === 2);
    expect(updates()[1]).toMatchObject({ channel: ch, text: 'answer to: sign me in' });
    // Someone else's edit, and then a later message: only the later message is answered.
    await bot.event(changed(ch, '3301.1', 'sign me in', 'sign her up', '3301.65', 'U2'));
    llm.enqueue(echo);
    await bot.event({
      type: 'message',
      user: 'U1',
      text: 'and now?',
      ts: '3301.7',
      thread_ts: '3301.1',
      channel: ch,
    });
    await slack.waitFor(() => posts(ch).length === 2);
    expect(posts(ch)[1]!.args.text).toBe('answer to: and now?');
    expect(updates()).toHaveLength(2);
    // Marked answered just after its post: only then is it an answer after the first question.
    await until(async () => {
      const row = await db.prisma.inboxEntry.findFirst({ where: { messageKey: `${ch}:3301.7` } });
      return row?.status === 'answered' || undefined;
    });
    // The first question is no longer the thread's last answered one: it is answered again in
    // place, with a note that the answer below it came before the edit; nothing is posted.
    llm.enqueue(echo);
    await bot.event(
      changed(ch, '3301.1', `<@${BOT_USER}> sign me in`, `<@${BOT_USER}> sign me over`, '3301.8'),
    );
    await slack.waitFor(() => updates().length === 3);
    expect(String(updates()[2]!.text)).toMatch(/^answer to: sign me over\n\n/);
    expect(updates()[2]!.text).toContain(STALE_ANSWERS_NOTE);
    expect(posts(ch)).toHaveLength(2);
    // The later question is still the thread's last: its edit is answered in place with no note.
    const later = () =>
      slack.callsTo('chat.update').filter((u) => u.ts === slack.tsOf(posts(ch)[1]!));
    llm.enqueue(echo);
    await bot.event(changed(ch, '3301.7', 'and now?', 'and then?', '3301.9'));
    await slack.waitFor(() => later().length === 1);
    expect(later()[0]!.text).toBe('answer to: and then?');
  });

  it("follows Slack's real message_changed (fixture 30, bolt-python's recorded shape) twice in a row for the same message", async () => {
    const ch = channel();
    llm.enqueue(echo);
    await bot.mention(ch, '3701.1');
    await slack.waitFor(() => posts(ch).length === 1);
    const ts = slack.tsOf(posts(ch)[0]!);
    const updates = () => slack.callsTo('chat.update').filter((u) => u.ts === ts);
    const recorded = JSON.parse(
      readFileSync(
        new URL('../../fixtures/slack-payloads/30-message-changed.json', import.meta.url),
        'utf8',
      ),
    ).payload.event as Record<string, Record<string, unknown>>;
    /** The recorded event, as U1's edit of the mention at 3701.1 to `now` (edited at `at`). */
    const edit = (was: string, now: string, at: string) => ({
      ...recorded,
      channel: ch,
      ts: at,
      event_ts: at,
      message: {
        ...recorded.message,
        user: 'U1',
        text: now,
        ts: '3701.1',
        blocks: undefined,
        edited: { user: 'U1', ts: at },
      },
      previous_message: {
        ...recorded.previous_message,
        user: 'U1',
        text: was,
        ts: '3701.1',
        blocks: undefined,
      },
    });
    llm.enqueue(echo);
    await bot.event(edit(`<@${BOT_USER}> sign me up`, `<@${BOT_USER}> updated message`, '3701.5'));
    await slack.waitFor(() => updates().length === 1);
    llm.enqueue(echo);
    await bot.event(
      edit(`<@${BOT_USER}> updated message`, `<@${BOT_USER}> updated again`, '3701.6'),
    );
    await slack.waitFor(() => updates().length === 2);
    expect(updates().map((u) => u.text)).toEqual([
      'answer to: updated message',
      'answer to: updated again',
    ]);
    expect(posts(ch)).toHaveLength(1);
  });

  it('runs a running turn again with the edited words, posting only the new answer; a deletion ends a turn with nothing posted', async () => {
    const long = longCall(30, 30);
    const ch = channel();
    llm.enqueue(long);
    await bot.mention(ch, '3401.1');
    const running = () =>
      slack
        .callsTo('assistant.threads.setStatus')
        .some((c) => c.channel_id === ch && String(c.status).startsWith('is running'));
    await slack.waitFor(running);
    llm.enqueue(echo);
    await bot.event(
      changed(ch, '3401.1', `<@${BOT_USER}> sign me up`, `<@${BOT_USER}> just say hi`, '3401.5'),
    );
    await slack.waitFor(() => posts(ch).length === 1);
    expect(posts(ch)[0]!.args.text).toBe('answer to: just say hi');
    expect(
      await db.prisma.inboxEntry.findFirstOrThrow({ where: { messageKey: `${ch}:3401.1` } }),
    ).toMatchObject({ status: 'answered', superseded: true });
    // A deleted question whose turn is running: it ends, and nothing is posted for it.
    const other = channel();
    llm.enqueue(long);
    await bot.mention(other, '3402.1');
    await slack.waitFor(() =>
      slack
        .callsTo('assistant.threads.setStatus')
        .some((c) => c.channel_id === other && String(c.status).startsWith('is running')),
    );
    await bot.event(deleted(other, '3402.1', `<@${BOT_USER}> sign me up`, '3402.5'));
    await until(async () => {
      const row = await db.prisma.inboxEntry.findFirstOrThrow({
        where: { messageKey: `${other}:3402.1` },
      });
      return row.status === 'answered' ? row : undefined;
    });
    expect(posts(other)).toEqual([]);
  });
});
