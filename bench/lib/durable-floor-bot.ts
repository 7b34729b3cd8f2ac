/**
 * The durable floor for the concurrency benchmark: the thinnest Slack bot that loses nothing, on
 * the same stack as the floor (Bolt over HTTP, the same model client) with raw `pg` behind it.
 * An event is in its inbox table before Slack hears it arrived; then, per thread, one statement
 * claims the next message, one saves the reply, one marks it posted. After a crash, a message
 * whose reply was saved but not marked posted is looked for in the thread by the reply's metadata
 * before it is posted again. No history, no tools: what a durable Spool cannot beat.
 *
 *   tsx bench/lib/durable-floor-bot.ts PORT OPENAI_BASE_URL SLACK_API_URL SIGNING_SECRET DATABASE_URL
 */
import bolt from '@slack/bolt';
import pg from 'pg';
import { KeyedQueue } from '../../src/core/delivery/intake/keyed-queue.ts';
import { OpenAiChatClient } from '../../src/llm/openai-client.ts';

const [port, baseURL, slackApiUrl, signingSecret, databaseUrl] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const REPLY_EVENT = 'durable_floor_reply';
const llm = new OpenAiChatClient({
  apiKey: 'sk-bench',
  baseURL,
  model: 'bench',
  maxTokens: 256,
  maxRetries: 0,
  timeoutMs: 60_000,
});
// As many connections as Spool's pool and ack pool together.
const db = new pg.Pool({ connectionString: databaseUrl, max: 12 });
await db.query(`
  CREATE TABLE IF NOT EXISTS floor_inbox (
    id bigserial PRIMARY KEY,
    message_key text NOT NULL UNIQUE,
    channel text NOT NULL,
    thread text NOT NULL,
    text text NOT NULL,
    reply text,
    posted_ts text
  );
  CREATE INDEX IF NOT EXISTS floor_inbox_unposted ON floor_inbox (channel, thread, id) WHERE posted_ts IS NULL`);
const app = new bolt.App({
  token: 'xoxb-durable-floor',
  signingSecret,
  clientOptions: { slackApiUrl },
  // Acknowledged once the listener has returned: after the row is inserted.
  processBeforeResponse: true,
});
const threads = new KeyedQueue();

interface Claimed {
  id: string;
  text: string;
  reply: string | null;
}

/**
 * The oldest message of the thread not yet posted. Threads are worked by this one process, one
 * turn at a time (`threads`), so reading it claims it; a second replica would lease the thread.
 */
async function claim(channel: string, thread: string): Promise<Claimed | undefined> {
  const { rows } = await db.query<Claimed>(
    `SELECT id::text, text, reply FROM floor_inbox
      WHERE channel = $1 AND thread = $2 AND posted_ts IS NULL ORDER BY id LIMIT 1`,
    [channel, thread],
  );
  return rows[0];
}

/** The reply posted by an attempt that crashed before marking it posted, found by its metadata. */
async function postedBefore(channel: string, thread: string, id: string) {
  const { messages } = await app.client.conversations.replies({
    channel,
    ts: thread,
    include_all_metadata: true,
  });
  const payload = (metadata?: { event_type?: string; event_payload?: object }) =>
    metadata?.event_type === REPLY_EVENT ? (metadata.event_payload as { inbox?: string }) : {};
  return messages?.find((m) => payload(m.metadata).inbox === id)?.ts;
}

/** Answers the thread's next message: one message per call, as many calls as messages arrived. */
async function answerNext(channel: string, thread: string): Promise<void> {
  const message = await claim(channel, thread);
  if (!message) return;
  let reply = message.reply;
  const found = reply === null ? undefined : await postedBefore(channel, thread, message.id);
  if (reply === null) {
    const answer = await llm.complete({
      system: 'You are a bot.',
      messages: [{ role: 'user', content: message.text, turn: 1 }],
      tools: [],
      toolChoice: 'auto',
    });
    reply = answer.content;
    await db.query('UPDATE floor_inbox SET reply = $2 WHERE id = $1', [message.id, reply]);
  }
  const ts =
    found ??
    (
      await app.client.chat.postMessage({
        channel,
        thread_ts: thread,
        text: reply,
        metadata: { event_type: REPLY_EVENT, event_payload: { inbox: message.id } },
      })
    ).ts;
  await db.query('UPDATE floor_inbox SET posted_ts = $2 WHERE id = $1', [message.id, ts ?? '']);
}

function work(channel: string, thread: string): void {
  void threads
    .run(`${channel}:${thread}`, () => answerNext(channel, thread))
    .catch((error: unknown) => console.error('durable floor: a turn failed', error));
}

async function receive(channel: string, thread: string, ts: string, text: string) {
  const { rowCount } = await db.query(
    `INSERT INTO floor_inbox (message_key, channel, thread, text) VALUES ($1, $2, $3, $4)
     ON CONFLICT (message_key) DO NOTHING`,
    [`${channel}:${ts}`, channel, thread, text],
  );
  if (rowCount === 1) work(channel, thread);
}

app.event('app_mention', async ({ event }) =>
  receive(
    event.channel,
    event.thread_ts ?? event.ts,
    event.ts,
    event.text.replace(/^<@\w+>\s*/, ''),
  ),
);
app.message(async ({ message }) => {
  if (message.subtype === undefined && 'thread_ts' in message && message.thread_ts)
    await receive(message.channel, message.thread_ts, message.ts, message.text ?? '');
});
// What a crashed run left: one turn per message not posted, in order per thread.
const { rows: left } = await db.query<{ channel: string; thread: string }>(
  'SELECT channel, thread FROM floor_inbox WHERE posted_ts IS NULL ORDER BY id',
);
for (const { channel, thread } of left) work(channel, thread);
await app.start(Number(port));
// Stopped between runs: no new request, and every turn begun is marked posted before exiting.
process.once('SIGTERM', () => {
  void app.stop().then(async () => {
    while (threads.size > 0) await new Promise((r) => setTimeout(r, 10));
    await db.end();
    process.exit(0);
  });
});
