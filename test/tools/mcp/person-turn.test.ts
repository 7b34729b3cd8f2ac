import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { queryAt } from '../../support/global-db.ts';
import { FakeOpenAi, type ChatRequest, type ScriptedReply } from '../../support/fake-openai.ts';
import { Browser } from '../../support/browser.ts';
import {
  BOT_USER,
  eventBody,
  FakeSlack,
  SLACK_CLIENT,
  SLACK_SESSION,
  TEAM,
} from '../../support/fake-slack.ts';
import { PersonMcpServer } from '../../support/person-mcp-server.ts';
import { freePort, runSpool, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, SIGNING_SECRET, startSlackBot } from '../../support/slack-bot.ts';

/**
 * A tool server used with each person's own sign-in, in full turns on two replicas: a person who
 * has not signed in gets a link only they see, the turn parks (as for an approval), and their
 * sign-in (Sign in with Slack, then the server's), landing on the other replica, wakes it: the call
 * is made once, as them, and the answer comes in the thread. The link forwarded to someone else
 * signs in nobody.
 */
let llm: FakeOpenAi;
let slack: FakeSlack;
let notes: PersonMcpServer;
let dir: string;
let ports: [number, number];
let env: Record<string, string>;
const bots: SpoolProcess[] = [];

/** A question gets one call of whoami; its result, the answer. */
function whoamiModel(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { content: `the server said: ${last.content}` };
  return { toolCalls: [{ id: 'call_0', name: 'notes__whoami', arguments: '{}' }] };
}

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = whoamiModel;
  slack = await new FakeSlack().start();
  notes = await new PersonMcpServer().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-person-'));
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({ mcpServers: { notes: { url: notes.url, identity: 'person' } } }),
  );
  ports = [await freePort(), await freePort()];
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: fileDatabaseUrl(),
    SLACK_API_URL: slack.apiUrl,
    SLACK_CLIENT_ID: SLACK_CLIENT.id,
    SLACK_CLIENT_SECRET: SLACK_CLIENT.secret,
    MCP_CONFIG: join(dir, 'mcp.json'),
    MCP_OAUTH_KEY: randomBytes(32).toString('base64'),
    // Every sign-in lands on the first replica.
    PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
    DATA_DIR: dir,
    // Time enough to follow a link in a test, short enough to see a link left unused.
    QUESTION_TIMEOUT_MS: '4000',
  };
  bots.push(...(await Promise.all(ports.map((port) => startSlackBot(port, env)))));
}, 90_000);

afterAll(async () => {
  for (const bot of bots) bot.child.kill('SIGTERM');
  await Promise.all(bots.map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm.stop(), slack.stop(), notes?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** The sign-in link shown to `user` alone (an ephemeral message's button), once there is one. */
const linkFor = (user: string, channel: string) =>
  until(() => {
    const shown = slack
      .callsTo('chat.postEphemeral')
      .find((m) => m.user === user && m.channel === channel);
    // Sent form-encoded, as the Web API client does: the blocks are JSON text.
    const raw = shown?.blocks ?? '[]';
    const blocks = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{
      elements?: Array<{ url?: string }>;
    }>;
    return blocks.flatMap((b) => b.elements ?? []).find((e) => e.url)?.url;
  }, 30_000);

/**
 * What a person does with the link, in their browser signed in to Slack as `user`: Sign in with
 * Slack, then the authorization server, which approves at once, and back to Spool.
 */
const openAs = (user: string, url: string) =>
  new Browser({ [slack.apiUrl]: `${SLACK_SESSION}=${TEAM}:${user}` }).open(url);

/** Rows of people's sign-ins: who is signed in, to anything. */
const signedInUsers = async () =>
  (
    await queryAt<{ user_id: string }>(
      fileDatabaseUrl(),
      'SELECT user_id FROM mcp_person_oauth ORDER BY user_id',
    )
  ).map((r) => r.user_id);

const answerIn = (channel: string) =>
  slack
    .callsTo('chat.postMessage')
    .find((m) => m.channel === channel && String(m.text).includes('the server said'));

describe('a server used with each person’s own sign-in, in a thread', () => {
  it('parks the turn for a person with no sign-in, and their sign-in on the other replica resumes it', async () => {
    const people = [
      { user: 'UCARA', channel: 'CPEOPLE1', ts: '4100.1' },
      { user: 'UDAN', channel: 'CPEOPLE2', ts: '4200.1' },
    ];
    for (const { user, channel, ts } of people) {
      const asked = eventBody({
        type: 'app_mention',
        user,
        text: `<@${BOT_USER}> who am I there?`,
        ts,
        channel,
      });
      expect(await deliver(ports[1], asked)).toBe(true);
      const url = await linkFor(user, channel);
      // Parked: the link is sent before the message is set to wait for it.
      await until(async () => {
        const [row] = await queryAt<{ status: string }>(
          fileDatabaseUrl(),
          'SELECT status FROM inbox WHERE message_key = $1',
          [`${channel}:${ts}`],
        );
        return row?.status === 'waiting' ? true : undefined;
      });
      expect(answerIn(channel)).toBeUndefined();
      // Forwarded first: whoever opens it is not the person it was sent to, and nobody signs in.
      const before = { authorizations: notes.authorizations.length, rows: await signedInUsers() };
      const forwarded = await openAs('UMALLORY', url);
      expect(forwarded.status).toBe(403);
      expect(forwarded.text).toContain('This sign-in link was sent to someone else');
      expect(notes.authorizations.length).toBe(before.authorizations);
      expect(await signedInUsers()).toEqual(before.rows);
      // The rightful person's browser, afterwards, with the same link.
      const landed = await openAs(user, url);
      expect(landed.status).toBe(200);
      const signedIn = Date.now();
      const answer = await until(() => answerIn(channel), 30_000);
      console.log(`${user}: the redirect to the answer in the thread, ${Date.now() - signedIn} ms`);
      expect(answer.thread_ts).toBe(ts);
      expect(answer.text).toContain('whoami: hello');
    }
    expect(await signedInUsers()).toEqual(['UCARA', 'UDAN']);
    // One call each, with their own token: never the other's.
    expect(notes.calls).toHaveLength(2);
    expect(notes.calls[0]!.token).not.toBe(notes.calls[1]!.token);
    // The link went to the person alone: nothing posted in a thread carries it.
    const posted = JSON.stringify(slack.callsTo('chat.postMessage'));
    expect(posted).not.toContain('state=');
    expect(posted).not.toContain(notes.origin);
    // Nor does anything the model read: neither the link nor a token.
    const asked = JSON.stringify(llm.requests);
    expect(asked).not.toContain('state=');
    for (const { token } of notes.calls) expect(asked).not.toContain(token);
  });

  it('declines the call of a person who does not sign in in time, and the model says so', async () => {
    const [channel, ts] = ['CPEOPLE3', '4300.1'];
    const calls = notes.calls.length;
    const asked = eventBody({
      type: 'app_mention',
      user: 'UEVE',
      text: `<@${BOT_USER}> who am I there?`,
      ts,
      channel,
    });
    expect(await deliver(ports[0], asked)).toBe(true);
    await linkFor('UEVE', channel);
    const answer = await until(() => answerIn(channel), 30_000);
    expect(answer.text).toContain('did not within 4 seconds');
    expect(notes.calls).toHaveLength(calls);
  });

  it('refuses to start a per-person server on Slack without Sign in with Slack', async () => {
    const without = Object.fromEntries(
      Object.entries(env).filter(([name]) => !name.startsWith('SLACK_CLIENT_')),
    );
    const run = await runSpool([], {
      env: {
        ...without,
        SLACK_BOT_TOKEN: 'xoxb-bot-process',
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        PORT: String(await freePort()),
      },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SLACK_CLIENT_ID and SLACK_CLIENT_SECRET');
  });
});
