import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../support/db.ts';
import { FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { freePort, REPO_ROOT, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, startSlackBot } from '../../support/slack-bot.ts';

/**
 * The bot SIGKILLed while a tool call is at its MCP server, then started again: the resumed turn
 * sends a read-only call again, and never a call with a side effect, whose outcome nobody knows.
 * The server (test/fixtures/ticket-mcp-server.mjs) counts the calls it really got.
 */
let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;
const bots: SpoolProcess[] = [];

beforeAll(async () => {
  scratch = await scratchDatabase('spool_interrupted_calls');
  llm = await new FakeOpenAi().start();
  // A new question gets one call: "file" creates a ticket, "look" looks one up; a result gets
  // "answer: <the result>".
  llm.fallback = (request) => {
    const last = request.messages.at(-1)!;
    if (last.role !== 'user') return { content: `answer: ${last.content}` };
    const tool = /file/.test(lastUserText(request)) ? 'create_ticket' : 'lookup_ticket';
    return {
      toolCalls: [{ id: 'call_0', name: `tickets__${tool}`, arguments: '{"title":"printer"}' }],
    };
  };
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-interrupted-'));
  const server = join(REPO_ROOT, 'test/fixtures/ticket-mcp-server.mjs');
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        tickets: {
          command: process.execPath,
          args: [server],
          env: { CALLS_FILE: join(dir, 'calls'), TICKET_DELAY_MS: '3000' },
        },
      },
    }),
  );
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: scratch.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DATA_DIR: dir,
    LEASE_TTL_MS: '1500',
  };
}, 60_000);

afterAll(async () => {
  for (const bot of bots) bot.child.kill('SIGTERM');
  await Promise.all(bots.map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

/** The calls the server got, by tool, in order. */
const calls = () =>
  existsSync(join(dir, 'calls'))
    ? readFileSync(join(dir, 'calls'), 'utf8').split('\n').filter(Boolean)
    : [];

/** The replies posted in `channel`. */
const answers = (channel: string) =>
  slack.callsTo('chat.postMessage').filter((m) => m.channel === channel);

/** The requests that asked the model about a new question containing `text`. */
const askedAbout = (text: string) =>
  llm.requests.filter((r) => r.messages.at(-1)!.role === 'user' && lastUserText(r).includes(text));

describe('tool calls cut short by a crash', () => {
  it('sends a read-only call again without asking the model, and never a call with a side effect: the server got that once, and the person is told it may or may not have happened', async () => {
    const port = await freePort();
    const first = await startSlackBot(port, env);
    bots.push(first);
    const asks = [
      { channel: 'CTICKET', text: 'file a ticket for the printer' },
      { channel: 'CLOOKUP', text: 'look up the printer ticket' },
    ];
    for (const { channel, text } of asks)
      expect(
        await deliver(
          port,
          eventBody({
            type: 'app_mention',
            user: 'U1',
            text: `<@${BOT_USER}> ${text}`,
            ts: '3000.1',
            channel,
          }),
        ),
      ).toBe(true);
    // Both calls are at the server, which takes 3 s to answer each: the bot dies now.
    await until(() => (calls().length === 2 ? true : undefined), 30_000);
    first.child.kill('SIGKILL');
    await first.done.catch(() => {});
    expect(calls().sort()).toEqual(['create_ticket', 'lookup_ticket']);

    bots.push(await startSlackBot(await freePort(), env));
    await slack.waitFor(() => asks.every(({ channel }) => answers(channel).length > 0), 60_000);
    expect(answers('CTICKET').map((m) => m.text)).toEqual([
      expect.stringMatching(
        /^answer: .*tickets__create_ticket was interrupted before it finished, and may or may not have taken effect/,
      ),
    ]);
    expect(answers('CLOOKUP').map((m) => m.text)).toEqual(['answer: T-1 "printer" is open']);
    // The ticket was filed once; the lookup was sent again by the resumed turn itself.
    expect(calls().filter((c) => c === 'create_ticket')).toHaveLength(1);
    expect(calls().filter((c) => c === 'lookup_ticket')).toHaveLength(2);
    for (const { text } of asks) expect(askedAbout(text)).toHaveLength(1);
    expect(llm.rejections).toEqual([]);
  }, 180_000);
});
