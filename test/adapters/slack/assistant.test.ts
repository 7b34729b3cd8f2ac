import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../../support/fake-openai.ts';
import type { FakeSlack } from '../../support/fake-slack.ts';
import { expectAcknowledged, startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

/**
 * Slack's agent view: real assistant_thread_started / _context_changed payloads and a person's
 * first question in the thread (fixtures 63, 64, 15), signed over HTTP.
 */
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/slack-payloads/${name}`, import.meta.url), 'utf8');
/** A fixture's payload with its DM channel made `channel`. */
const payload = (name: string, channel: string) =>
  JSON.parse(fixture(name).replaceAll('"D111"', `"${channel}"`)).payload as Record<string, unknown>;

const INCIDENTS = 'C222';
const DEPLOYS = 'C333';
const policy = {
  rules: [
    { match: { platform: 'slack' }, greeting: 'Hello from Spool.' },
    {
      match: { platform: 'slack', channel: INCIDENTS },
      greeting: 'Hi! Ask me about the incidents in this channel.',
      suggestedPrompts: [
        { title: 'Open incidents', message: 'Which incidents are open?' },
        { title: 'Last postmortem', message: 'Summarise the last postmortem.' },
      ],
    },
    {
      match: { platform: 'slack', channel: DEPLOYS },
      suggestedPrompts: [{ title: 'Deploys today', message: 'What was deployed today?' }],
    },
  ],
};

let bot: SlackSpool;
let llm: FakeOpenAi;
let slack: FakeSlack;

beforeAll(async () => {
  bot = await startSlackSpool({ engine: { policy } });
  ({ llm, slack } = bot);
  llm.fallback = () => ({ content: 'Slack was released in 2013.' });
});
afterAll(() => bot?.close());

const deliver = (body: Record<string, unknown>) => expectAcknowledged(bot.event(body));

describe("Slack's agent view", () => {
  it("greets a new thread with its context channel's greeting and prompts (once however often Slack sends it), sets another channel's prompts when the context changes, and titles the thread after the first question", async () => {
    const dm = `D${Date.now()}`;
    const posts = () => slack.callsTo('chat.postMessage').filter((m) => m.channel === dm);
    const prompts = () =>
      slack.callsTo('assistant.threads.setSuggestedPrompts').filter((c) => c.channel_id === dm);
    const started = payload('63-assistant-thread-started.json', dm);
    await deliver(started);
    await deliver({ ...started, event_id: 'Ev-again' });
    await slack.waitFor(() => posts().length === 1);
    expect(posts()[0]).toMatchObject({
      thread_ts: '1726133698.626339',
      text: 'Hi! Ask me about the incidents in this channel.',
    });
    const parsed = (c: Record<string, unknown>) =>
      typeof c.prompts === 'string' ? JSON.parse(c.prompts) : c.prompts;
    expect(prompts()[0]).toMatchObject({ thread_ts: '1726133698.626339' });
    expect(parsed(prompts()[0]!)).toEqual(policy.rules[1]!.suggestedPrompts);
    // Looking at the deploys channel now: its prompts, and nothing posted.
    await deliver(payload('64-assistant-thread-context-changed.json', dm));
    await slack.waitFor(() => prompts().length >= 3);
    expect(parsed(prompts().at(-1)!)).toEqual(policy.rules[2]!.suggestedPrompts);
    // The first question: answered in the thread, which is named after it.
    await deliver(payload('15-dm-assistant-thread-reply.json', dm));
    await slack.waitFor(() => posts().length === 2);
    expect(String(posts()[1]!.text)).toBe('Slack was released in 2013.');
    expect(slack.callsTo('assistant.threads.setTitle').filter((c) => c.channel_id === dm)).toEqual([
      expect.objectContaining({
        thread_ts: '1726133698.626339',
        title: 'When Slack was released?',
      }),
    ]);
    expect(posts()).toHaveLength(2);
  });

  it('gives the model the channel message the person has open ("summarize this") as its subject, only where they are a member of its channel', async () => {
    const asked = (words: string) =>
      llm.requests.find((r) =>
        r.messages.some((m) => m.role === 'user' && String(m.content).includes(words)),
      );
    /** Fixture 85 in a DM of its own, about the message `ts` in `channel`. */
    const viewing = (dm: string, channel: string, ts: string, text: string) => {
      const body = JSON.parse(
        fixture('85-dm-agent-view-message-context.json')
          .replaceAll('"D_DM_123"', `"${dm}"`)
          .replaceAll('"C_CTX_123"', `"${channel}"`)
          .replaceAll('"1771460400.100100"', `"${ts}"`)
          .replaceAll('summarize this', text),
      ).payload as Record<string, unknown>;
      return { ...body, event_id: `Ev-${dm}` };
    };
    const read = (channel: string) =>
      slack.callsTo('conversations.replies').filter((c) => c.channel === channel);

    slack.threads.set('1771460400.100100', [
      { ts: '1771460400.100100', user: 'U0AUTHOR', text: 'Q3 revenue &gt; plan; churn up 2%' },
    ]);
    slack.members.set('C0MEMBER', ['U0OTHER', 'U_USER_123']);
    await deliver(viewing(`D${Date.now()}`, 'C0MEMBER', '1771460400.100100', 'summarize this one'));
    await slack.waitFor(() => asked('summarize this one') !== undefined);
    const user = asked('summarize this one')!
      .messages.filter((m) => m.role === 'user')
      .at(-1)!;
    expect(String(user.content)).toContain(
      'summarize this one\n\nThe message (from <@U0AUTHOR>):\n> Q3 revenue > plan; churn up 2%',
    );

    // A channel they are not in: their words only, and nothing read from it.
    slack.threads.set('1771460401.100100', [
      { ts: '1771460401.100100', user: 'U0AUTHOR', text: 'Private: layoffs list' },
    ]);
    slack.members.set('C0PRIVATE', ['U0OTHER']);
    await deliver(viewing(`D${Date.now()}`, 'C0PRIVATE', '1771460401.100100', 'summarize that'));
    await slack.waitFor(() => asked('summarize that') !== undefined);
    const refused = asked('summarize that')!
      .messages.filter((m) => m.role === 'user')
      .at(-1)!;
    expect(String(refused.content)).not.toContain('layoffs');
    expect(read('C0PRIVATE')).toEqual([]);
    expect(slack.callsTo('conversations.members').map((c) => c.channel)).toContain('C0PRIVATE');
  });
});
