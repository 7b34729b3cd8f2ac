/**
 * The floor for the concurrency benchmark: the thinnest Slack bot built like Spool (Bolt over
 * HTTP, the same model client, messages of a thread answered in order) with nothing durable
 * behind it. No database, no inbox, no history: what no durable bot can beat.
 *
 *   tsx bench/lib/floor-bot.ts PORT OPENAI_BASE_URL SLACK_API_URL SIGNING_SECRET
 */
import bolt from '@slack/bolt';
import { KeyedQueue } from '../../src/core/delivery/intake/keyed-queue.ts';
import { OpenAiChatClient } from '../../src/llm/openai-client.ts';

const [port, baseURL, slackApiUrl, signingSecret] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const llm = new OpenAiChatClient({
  apiKey: 'sk-bench',
  baseURL,
  model: 'bench',
  maxTokens: 256,
  maxRetries: 0,
  timeoutMs: 60_000,
});
const app = new bolt.App({ token: 'xoxb-floor', signingSecret, clientOptions: { slackApiUrl } });
const threads = new KeyedQueue();

function answer(channel: string, thread: string, text: string): void {
  void threads.run(`${channel}:${thread}`, async () => {
    const reply = await llm.complete({
      system: 'You are a bot.',
      messages: [{ role: 'user', content: text, turn: 1 }],
      tools: [],
      toolChoice: 'auto',
    });
    await app.client.chat.postMessage({ channel, thread_ts: thread, text: reply.content });
  });
}

app.event('app_mention', async ({ event }) =>
  answer(event.channel, event.thread_ts ?? event.ts, event.text.replace(/^<@\w+>\s*/, '')),
);
app.message(async ({ message }) => {
  if (message.subtype === undefined && 'thread_ts' in message && message.thread_ts)
    answer(message.channel, message.thread_ts, message.text ?? '');
});
await app.start(Number(port));
