import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { createScratchDatabase, queryAt } from '../../support/global-db.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, slowToolConfig, slowToolModel, startSlackBot } from '../../support/slack-bot.ts';

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let ports: number[];
let bots: SpoolProcess[];

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_replicas');
  llm = await new FakeOpenAi().start();
  llm.fallback = slowToolModel(1);
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-replicas-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
  ports = [await freePort(), await freePort()];
  const env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: scratch.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DATA_DIR: dir,
  };
  // Started at the same moment on an empty database: the migrations run once, under their lock.
  bots = await Promise.all(ports.map((port) => startSlackBot(port, env)));
}, 60_000);

afterAll(async () => {
  for (const bot of bots ?? []) bot.child.kill('SIGTERM');
  await Promise.all((bots ?? []).map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

const repliesIn = (channel: string, thread: string) =>
  slack
    .callsTo('chat.postMessage')
    .filter((m) => m.channel === channel && m.thread_ts === thread)
    .map((m) => String(m.text));
const mention = (channel: string, ts: string, text: string) =>
  eventBody({ type: 'app_mention', user: 'U1', text: `<@${BOT_USER}> ${text}`, ts, channel });
const followUp = (channel: string, thread: string, ts: string, text: string) =>
  eventBody({
    type: 'message',
    channel_type: 'channel',
    user: 'U1',
    text,
    ts,
    thread_ts: thread,
    channel,
  });
/** Model requests that ask about `text`: the first one starts its slow tool. */
const asked = (text: string) =>
  llm.requests.filter((r) => r.messages.some((m) => m.role === 'user' && m.content === text))
    .length;

const rows = <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) =>
  queryAt<T>(scratch.url, sql, values);

describe('two replicas on one PostgreSQL database', () => {
  it('answers one thread delivered alternately to both, once per message and in order, never interrupting a live call', async () => {
    const channel = 'CALTERNATE';
    const texts = ['q1', 'q2', 'q3', 'q4', 'q5'];
    for (const [i, text] of texts.entries()) {
      const body =
        i === 0
          ? mention(channel, '100.1', text)
          : followUp(channel, '100.1', `100.${i + 1}`, text);
      expect(await deliver(ports[i % 2]!, body)).toBe(true);
      // The next message arrives at the other replica while this one's slow tool runs (or waits its
      // turn).
      if (i === 0) await slack.waitFor(() => asked(text) > 0, 30_000);
    }
    await slack.waitFor(() => repliesIn(channel, '100.1').length === texts.length, 60_000);
    expect(repliesIn(channel, '100.1')).toEqual(texts.map((t) => `answer to ${t}`));
    expect(llm.rejections).toEqual([]);
    const toolResults = llm.requests.flatMap((r) =>
      r.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? ''),
    );
    expect(toolResults.filter((c) => /interrupted/.test(c))).toEqual([]);
    // Every call was "call_0" to the model; Spool gave each its own id, so none was lost.
    const calls = await rows<{ tool_call_id: string; model_call_id: string }>(
      `SELECT c.tool_call_id, c.model_call_id FROM tool_calls c JOIN tool_results r ON r.call_id = c.id WHERE c.channel_key LIKE '%' || $1 || '%'`,
      [channel],
    );
    expect(calls).toHaveLength(texts.length);
    expect(new Set(calls.map((c) => c.tool_call_id)).size).toBe(texts.length);
    expect(calls.every((c) => c.model_call_id === 'call_0')).toBe(true);
  });

  it('answers an event delivered to both replicas at once exactly once', async () => {
    const channel = 'CBOTH';
    const threads = ['200.1', '201.1', '202.1'];
    await Promise.all(
      threads.map((ts) =>
        Promise.all(ports.map((port) => deliver(port, mention(channel, ts, `first in ${ts}`)))),
      ),
    );
    // One more message per thread, again to both: a second answer to the first would come before
    // its answer.
    await Promise.all(
      threads.map((ts) =>
        Promise.all(
          ports.map((port) => deliver(port, followUp(channel, ts, `${ts}1`, `second in ${ts}`))),
        ),
      ),
    );
    await slack.waitFor(() => threads.every((ts) => repliesIn(channel, ts).length >= 2), 60_000);
    for (const ts of threads)
      expect(repliesIn(channel, ts)).toEqual([
        `answer to first in ${ts}`,
        `answer to second in ${ts}`,
      ]);
    // The inbox row is marked answered just after the reply is posted, so wait for the rows, not
    // the replies.
    const statuses = () =>
      rows<{ status: string }>(`SELECT status FROM inbox WHERE message_key LIKE $1 || ':%'`, [
        channel,
      ]);
    const settled = await until(async () => {
      const now = (await statuses()).map((r) => r.status);
      return now.length === 6 && !now.includes('pending') ? now : undefined;
    });
    expect(settled).toEqual(Array(6).fill('answered'));
  });
});
