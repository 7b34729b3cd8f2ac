import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FEEDBACK_ACTION,
  REASON_ACTION,
  SKIP_ACTION,
} from '../../../src/adapters/slack/feedback.ts';
import type { Database } from '../../../src/store/database.ts';
import type { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, blocksOf, eventBody, TEAM, type FakeSlack } from '../../support/fake-slack.ts';
import { startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

/**
 * 👍 and 👎 under Spool's answers in Slack (Block Kit feedback_buttons), clicked as Slack sends a
 * click (fixture 80), stored once per person per answer and shown by /spool usage.
 */
const FIXTURE = JSON.parse(
  readFileSync(
    new URL(
      '../../fixtures/slack-payloads/80-block-actions-feedback-buttons.json',
      import.meta.url,
    ),
    'utf8',
  ),
) as { payload: Record<string, unknown> };

let bot: SlackSpool;
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;

beforeAll(async () => {
  bot = await startSlackSpool({ engine: { policy: { rules: [], admins: ['UADMIN'] } } });
  ({ db, llm, slack } = bot);
  llm.fallback = () => ({ content: 'the answer' });
});
afterAll(() => bot?.close());

const interact = (payload: Record<string, unknown>) => bot.interaction(payload);

/** Fixture 80's click, as a click by `user` on the answer `ts` in `channel`. */
function feedbackClick(
  user: string,
  channel: string,
  ts: string,
  action: Record<string, unknown>,
  responseId: string,
) {
  const { payload } = FIXTURE;
  const [recorded] = payload.actions as Array<Record<string, unknown>>;
  return {
    ...payload,
    user: { ...(payload.user as object), id: user, team_id: TEAM },
    team: { id: TEAM, domain: 'test' },
    container: { ...(payload.container as object), channel_id: channel, message_ts: ts },
    channel: { id: channel, name: 'ops' },
    message: { ...(payload.message as object), ts },
    response_url: slack.responseUrl(responseId),
    actions: [{ ...recorded, ...action }],
  };
}

describe('feedback on answers in Slack', () => {
  it('puts 👍/👎 under an answer; stores one rating per person per answer (a second click replaces the first), with an optional reason for 👎; shows them in /spool usage', async () => {
    const ch = `CFB${Date.now()}`;
    await bot.event(
      eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> help`,
        ts: '5100.1',
        channel: ch,
      }),
    );
    const answerCall = () =>
      slack.calls.find((c) => c.method === 'chat.postMessage' && c.args.channel === ch);
    await slack.waitFor(() => answerCall() !== undefined);
    const answer = answerCall()!;
    const blocks = blocksOf(answer.args);
    expect(blocks.map((b) => b.type)).toEqual(['section', 'context_actions']);
    expect(blocks[0]).toMatchObject({ text: { type: 'mrkdwn', text: 'the answer' } });
    const [buttons] = (blocks[1] as { elements: Array<Record<string, unknown>> }).elements;
    expect(buttons).toMatchObject({ type: 'feedback_buttons', action_id: FEEDBACK_ACTION });
    const up = (buttons!.positive_button as { value: string }).value;
    const down = (buttons!.negative_button as { value: string }).value;
    const [inbox] = await db.prisma.inboxEntry.findMany({
      where: { messageKey: `${ch}:5100.1` },
    });
    expect([up, down]).toEqual([`up:${inbox!.id}`, `down:${inbox!.id}`]);
    const ts = slack.tsOf(answer)!;
    const rows = () =>
      db.prisma.answerFeedback.findMany({ where: { channel: ch }, orderBy: { userId: 'asc' } });
    const click = (user: string, value: string, id: string) =>
      interact(feedbackClick(user, ch, ts, { action_id: FEEDBACK_ACTION, value }, id));

    // 👍 by U1, then U1 changes their mind: one row, now 👎, and a private prompt for a reason.
    await click('U1', up, 'u1-up');
    await slack.waitFor(() => slack.responses('u1-up').length === 1);
    await click('U1', down, 'u1-down');
    await slack.waitFor(() => slack.responses('u1-down').length === 1);
    const [prompt] = slack.responseArgs('u1-down');
    expect(prompt).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    const reasonBlock = blocksOf(prompt!).find((b) => b.type === 'input')!;
    expect(reasonBlock).toMatchObject({ dispatch_action: true });
    expect(await rows()).toMatchObject([
      { userId: 'U1', rating: 'down', reason: null, askedBy: 'U1', inboxId: BigInt(inbox!.id) },
    ]);
    // The reason, typed and sent with Enter (a plain_text_input's dispatched action).
    await interact(
      feedbackClick(
        'U1',
        ch,
        ts,
        {
          type: 'plain_text_input',
          action_id: REASON_ACTION,
          block_id: reasonBlock.block_id,
          value: 'It cited the wrong runbook',
        },
        'u1-reason',
      ),
    );
    await slack.waitFor(() => slack.responses('u1-reason').length === 1);
    expect(await rows()).toMatchObject([
      { userId: 'U1', rating: 'down', reason: 'It cited the wrong runbook' },
    ]);
    // U2's 👎, then Skip: the prompt goes, the rating stays, with no reason.
    await click('U2', down, 'u2-down');
    await slack.waitFor(() => slack.responses('u2-down').length === 1);
    await interact(
      feedbackClick(
        'U2',
        ch,
        ts,
        { type: 'button', action_id: SKIP_ACTION, value: String(inbox!.id) },
        'u2-skip',
      ),
    );
    await slack.waitFor(() => slack.responseArgs('u2-skip').length === 1);
    expect(slack.responseArgs('u2-skip')[0]).toMatchObject({ delete_original: true });
    // U3's 👍, clicked twice: still one row.
    await click('U3', up, 'u3-up-1');
    await click('U3', up, 'u3-up-2');
    await slack.waitFor(() => slack.responses('u3-up-2').length === 1);
    expect((await rows()).map((r) => [r.userId, r.rating, r.reason])).toEqual([
      ['U1', 'down', 'It cited the wrong runbook'],
      ['U2', 'down', null],
      ['U3', 'up', null],
    ]);
    // A forged value naming no answer in this channel stores nothing, and says so.
    await click('U4', 'up:999999999', 'forged');
    await slack.waitFor(() => slack.responses('forged').length === 1);
    expect(slack.responses('forged')[0]).toContain('not saved');
    expect(await rows()).toHaveLength(3);

    // /spool usage: the ratings of the answers to U1's messages, beside the cost.
    await bot.command({
      command: '/spool',
      text: 'usage',
      team_id: TEAM,
      channel_id: ch,
      user_id: 'U1',
      response_url: slack.responseUrl('usage-u1'),
      trigger_id: 't',
    });
    await slack.waitFor(() => slack.responses('usage-u1').length === 1);
    expect(slack.responses('usage-u1')[0]).toContain('Answers rated this month: 👍 1 · 👎 2');
  });
});
