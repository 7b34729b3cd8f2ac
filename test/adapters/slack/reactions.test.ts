import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import type { Policy } from '../../../src/core/delivery/rules/policy.ts';
import type { Database } from '../../../src/store/database.ts';
import { type FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import type { FakeSlack } from '../../support/fake-slack.ts';
import { expectAcknowledged, startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

/**
 * Reactions as requests, replayed from Slack's documented reaction_added and reaction_removed
 * payloads (test/fixtures/slack-payloads), signed over HTTP, with a policy that maps the emoji to
 * a prompt.
 */
const payload = (file: string) =>
  (
    JSON.parse(
      readFileSync(new URL(`../../fixtures/slack-payloads/${file}`, import.meta.url), 'utf8'),
    ) as { payload: Record<string, unknown> }
  ).payload;
const ADDED = payload('81-reaction-added-docs.json');
const REMOVED = payload('82-reaction-removed-docs.json');
/** The documented payloads' message, user and emoji. */
const CHANNEL = 'C123ABC456';
const TS = '1360782400.498405';
const PROMPT = 'Look into this message and say what you find';

let bot: SlackSpool;
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;

beforeAll(async () => {
  const policy: Policy = {
    rules: [
      { match: {}, reactions: { thumbsup: PROMPT } },
      { match: { channel: 'CQUIET' }, reactions: { eyes: 'Elsewhere only' } },
    ],
  };
  bot = await startSlackSpool({ engine: { policy }, adapter: { policy } });
  ({ db, llm, slack } = bot);
  llm.fallback = () => ({ content: 'Found it: the disk is nearly full.' });
});

afterAll(() => bot?.close());

/** Delivers an Events API payload as Slack does: signed, over HTTP; acknowledged once handled. */
const deliver = (body: Record<string, unknown>) => expectAcknowledged(bot.event(body));

/** The payload about another message (`ts`, in `channel`), with another emoji if given. */
function about(
  body: Record<string, unknown>,
  change: { channel?: string; ts?: string; reaction?: string; eventId?: string },
): Record<string, unknown> {
  const event = body.event as Record<string, unknown>;
  const item = event.item as Record<string, unknown>;
  return {
    ...body,
    event_id: change.eventId ?? body.event_id,
    event: {
      ...event,
      reaction: change.reaction ?? event.reaction,
      item: { ...item, channel: change.channel ?? item.channel, ts: change.ts ?? item.ts },
    },
  };
}

const postedIn = (channel: string, thread: string) =>
  slack
    .callsTo('chat.postMessage')
    .filter((m) => m.channel === channel && m.thread_ts === thread)
    .map((m) => String(m.text));
const asked = (words: string) =>
  llm.requests.filter((r) =>
    r.messages.some((m) => m.role === 'user' && String(m.content).includes(words)),
  );
const rowsOf = (messageKey: string) =>
  db.prisma.inboxEntry.findMany({ where: { platform: 'slack', messageKey } });

describe('reactions as requests', () => {
  it('answers a mapped reaction once, in the message’s thread, with the message as its subject, however often Slack delivers it', async () => {
    slack.threads.set(TS, [{ ts: TS, user: 'U222222222', text: 'Disk usage on db-1 is at 97%' }]);
    await deliver(ADDED);
    // Slack delivers it again (a retry, same event id), and once more as another event.
    await deliver(ADDED);
    await deliver(about(ADDED, { eventId: 'Ev-again' }));
    await slack.waitFor(() => postedIn(CHANNEL, TS).length === 1);
    expect(postedIn(CHANNEL, TS)).toEqual(['Found it: the disk is nearly full.']);
    const requests = asked(PROMPT);
    expect(requests).toHaveLength(1);
    const text = lastUserText(requests[0]!);
    expect(text).toBe(
      `${PROMPT}\n\nThe message (from <@U222222222>):\n> Disk usage on db-1 is at 97%`,
    );
    // Answered once posted: the row is marked just after.
    await expect
      .poll(async () =>
        (await rowsOf(`reaction:${CHANNEL}:${TS}:U123ABC456:thumbsup`)).map((r) => [
          r.userId,
          r.status,
        ]),
      )
      .toEqual([['U123ABC456', 'answered']]);
  });

  it('answers a reaction on a reply in that reply’s thread; ignores emoji no prompt is mapped to', async () => {
    const [root, reply] = ['1360790000.000100', '1360790000.000200'];
    slack.threads.set(root, [
      { ts: root, thread_ts: root, user: 'U222222222', text: 'Deploy of api v42 started' },
      { ts: reply, thread_ts: root, user: 'U333333333', text: 'It failed on step 3' },
    ]);
    // Not mapped here (only in CQUIET), then mapped: only the second asks anything.
    await deliver(about(ADDED, { ts: reply, reaction: 'eyes', eventId: 'Ev-eyes' }));
    await deliver(about(ADDED, { ts: reply, eventId: 'Ev-reply' }));
    await slack.waitFor(() => postedIn(CHANNEL, root).length === 1);
    expect(postedIn(CHANNEL, reply)).toEqual([]);
    expect(asked('> It failed on step 3')).toHaveLength(1);
    expect(await rowsOf(`reaction:${CHANNEL}:${reply}:U123ABC456:eyes`)).toEqual([]);
  });

  it('stops the turn of a reaction taken back while it runs, with the note a Stop leaves', async () => {
    const ts = '1360800000.000100';
    slack.threads.set(ts, [{ ts, user: 'U222222222', text: 'Latency doubled at noon' }]);
    llm.latencyMs = 30_000;
    try {
      await deliver(about(ADDED, { ts, eventId: 'Ev-slow' }));
      await slack.waitFor(() => asked('> Latency doubled at noon').length === 1);
      await deliver(about(REMOVED, { ts }));
      await slack.waitFor(() => postedIn(CHANNEL, ts).length === 1);
    } finally {
      llm.latencyMs = 0;
    }
    expect(postedIn(CHANNEL, ts)).toEqual([STOPPED_REPLY]);
    const [row] = await rowsOf(`reaction:${CHANNEL}:${ts}:U123ABC456:thumbsup`);
    expect(row?.stoppedBy).toBe('U123ABC456');
  });
});
