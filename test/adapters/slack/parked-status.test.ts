import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { testTool } from '../../support/agent.ts';
import type { ChatRequest, FakeOpenAi } from '../../support/fake-openai.ts';
import {
  BOT_USER,
  buttonClick,
  eventBody,
  isPrompt,
  type FakeSlack,
} from '../../support/fake-slack.ts';
import { expectAcknowledged, startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

/**
 * Slack clears assistant.threads.setStatus after two minutes: a turn parked for approval shows
 * "waiting for approval…" again before then, for as long as it waits (here every 300 ms), and
 * stops once it is decided.
 */
const REFRESH_MS = 300;
const WAITING = 'is waiting for approval of lookup from <@U9>…';

let bot: SlackSpool;
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;

const lookup = testTool('lookup', () => ({ content: 'inventory: 42 units', isError: false }));

beforeAll(async () => {
  const policy = {
    rules: [{ match: { platform: 'slack' }, approve: ['lookup'], approvers: ['U9'] }],
  };
  bot = await startSlackSpool({
    tools: [lookup],
    engine: { policy, statusRefreshMs: REFRESH_MS },
    adapter: { policy },
  });
  ({ db, llm, slack } = bot);
  llm.fallback = (request: ChatRequest) =>
    request.messages.at(-1)!.role === 'user'
      ? { toolCalls: [{ id: 'l', name: 'lookup', arguments: '{}' }] }
      : { content: `tool said: ${request.messages.at(-1)!.content}` };
});

afterAll(() => bot?.close());

describe('a parked turn’s status in Slack', () => {
  it('is shown again while the turn waits for approval, without asking the model again, and no more once it is decided', async () => {
    const ch = `C${Date.now()}`;
    const ts = '2100.1';
    const mention = eventBody({
      type: 'app_mention',
      user: 'U1',
      text: `<@${BOT_USER}> stock?`,
      ts,
      channel: ch,
    });
    await expectAcknowledged(bot.event(mention));
    await slack.waitFor(() => slack.prompts(ch).length === 1);
    const statuses = () =>
      slack.calls.filter(
        (c) => c.method === 'assistant.threads.setStatus' && c.args.channel_id === ch,
      );
    const waiting = () => statuses().filter((c) => c.args.status === WAITING);
    const asked = llm.requests.length;
    // Shown once when it parked, then again, and again: each before Slack would drop it.
    await slack.waitFor(() => waiting().length >= 3);
    expect(llm.requests.length).toBe(asked);
    expect(slack.prompts(ch)).toHaveLength(1);
    // The last status set while it waits is the waiting one.
    expect(statuses().at(-1)!.args.status).toBe(WAITING);

    const prompt = slack.prompts(ch)[0]!;
    const click = buttonClick({
      user: 'U9',
      channel: ch,
      messageTs: prompt.ts,
      threadTs: prompt.threadTs,
      actionId: 'spool_approve',
      value: prompt.toolCallId,
      responseUrl: slack.responseUrl(`${ch}-approve`),
    });
    await expectAcknowledged(bot.interaction(click));
    await slack.waitFor(() =>
      slack.calls.some(
        (c) =>
          c.method === 'chat.postMessage' &&
          c.args.channel === ch &&
          !isPrompt(c.args) &&
          String(c.args.text).startsWith('tool said: inventory'),
      ),
    );
    const reply = slack.calls.find(
      (c) => c.method === 'chat.postMessage' && c.args.channel === ch && !isPrompt(c.args),
    )!;
    // Answered: the row waits no more, so nothing comes up to show the status again.
    await expect
      .poll(
        async () =>
          (
            await db.prisma.inboxEntry.findFirstOrThrow({
              where: { platform: 'slack', messageKey: `${ch}:${ts}` },
            })
          ).status,
      )
      .toBe('answered');
    expect(waiting().every((c) => c.at <= reply.at)).toBe(true);
  });
});
