import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { openWebPages, resultPage } from '../../../src/web/open.ts';
import type { WebPages } from '../../../src/web/pages.ts';
import { testTool } from '../../support/agent.ts';
import { testDatabase, testSearch } from '../../support/db.ts';
import type { ChatRequest, FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, blocksOf, eventBody, TEAM, type FakeSlack } from '../../support/fake-slack.ts';
import { silentLogger } from '../../support/logger.ts';
import { startSlackSpool, type SlackSpool } from '../../support/slack-spool.ts';

/**
 * A reply whose turn showed the model a result as a preview carries a "View the whole result"
 * button (Block Kit, posted through the fake Slack Web API), and its address, which carries the
 * call's id alone, opens the whole result on Spool's web pages for a person who may read the
 * channel.
 */
/** 60,000 characters of numbered lines: over the agent's 20,000-character preview threshold. */
const LISTING = Array.from(
  { length: 2_000 },
  (_, i) => `listing line ${String(i).padStart(5, '0')} ok`,
).join('\n');

let bot: SlackSpool;
let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let pagesServer: Server;
let web: WebPages;
let pagesAt: string;

beforeAll(async () => {
  db = await testDatabase();
  // The web pages, on a server of their own: the replies' links point there.
  web = openWebPages({ enabled: true, sessionMs: 3_600_000, pageChars: 100_000 }, db, {
    signIns: {},
    access: new Map([['slack', { canRead: async (user: string) => user === 'U1' }]]),
    admins: [],
    search: testSearch(db),
    logger: silentLogger,
    // The operator pages are not visited here: nothing runs, nothing is ready to report.
    operators: {
      cancelSchedule: async () => undefined,
      replica: 'result-links-test',
      notReady: async () => [],
      mcpServers: () => [],
      now: () => new Date(),
    },
  })!;
  pagesServer = createServer((req, res) => void web.handle(req, res));
  await new Promise<void>((resolve) => pagesServer.listen(0, '127.0.0.1', resolve));
  pagesAt = `http://127.0.0.1:${(pagesServer.address() as AddressInfo).port}`;
  const listing = testTool('listing', () => ({ content: LISTING, isError: false }));
  bot = await startSlackSpool({
    db,
    tools: [listing],
    engine: { resultPage: resultPage(pagesAt) },
  });
  ({ llm, slack } = bot);
  llm.fallback = (request: ChatRequest) =>
    request.messages.at(-1)!.role === 'user'
      ? { toolCalls: [{ id: 'l', name: 'listing', arguments: '{}' }] }
      : { content: 'The listing has 2,000 lines.' };
});

afterAll(async () => {
  await bot?.close();
  await new Promise((resolve) => pagesServer?.close(resolve));
  await db?.close();
});

describe('a reply links the whole results its turn previewed', () => {
  it('posts a "View the whole result" URL button to the result page, whose address carries the id alone and opens the whole result; /spool result links it too', async () => {
    const channel = `CRL${Date.now()}`;
    const mention = eventBody({
      type: 'app_mention',
      user: 'U1',
      text: `<@${BOT_USER}> how long is the listing?`,
      ts: '7100.1',
      channel,
    });
    const sent = await bot.event(mention);
    expect(sent.status).toBe(200);
    const answer = () =>
      slack.calls.find((c) => c.method === 'chat.postMessage' && c.args.channel === channel);
    await slack.waitFor(() => answer() !== undefined);

    // The model was sent a preview of the listing, and the call's id is Spool's own.
    const [call] = await db.prisma.toolCall.findMany({
      where: { channelKey: { contains: channel } },
    });
    expect(call).toMatchObject({ toolName: 'listing' });
    const sentToModel = llm.requests.at(-1)!.messages.find((m) => m.role === 'tool')!.content!;
    expect(sentToModel.length).toBeLessThan(LISTING.length);

    // Its blocks: the text, the link button, then 👍 and 👎.
    const blocks = blocksOf(answer()!.args);
    expect(blocks.map((b) => b.type)).toEqual(['section', 'actions', 'context_actions']);
    const [button, ...others] = (blocks[1] as { elements: Array<Record<string, unknown>> })
      .elements;
    expect(others).toEqual([]);
    const url = `${pagesAt}/web/results/${call!.toolCallId}`;
    expect(button).toMatchObject({
      type: 'button',
      text: { type: 'plain_text', text: 'View the whole result' },
      url,
    });
    // The address is the page's and the call's id: no query, nothing of the result, no secret.
    expect(new URL(url).search).toBe('');
    expect(call!.toolCallId).toMatch(/^call_[0-9a-f]{32}$/);

    // Opened by a person who may read the channel: the whole result, lines the preview left out.
    const cookie = await web.sessions.start({ platform: 'slack', workspace: TEAM, user: 'U1' });
    const session = cookie.split(';')[0]!;
    const page = await fetch(url, { headers: { cookie: session } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(sentToModel).not.toContain('listing line 01000 ok');
    for (const line of ['listing line 00000 ok', 'listing line 01000 ok', 'listing line 01999 ok'])
      expect(html).toContain(line);
    // Anyone else, as for any page: exactly as a result that does not exist.
    const other = await web.sessions.start({ platform: 'slack', workspace: TEAM, user: 'U2' });
    const refused = await fetch(url, { headers: { cookie: other.split(';')[0]! } });
    expect(refused.status).toBe(404);
    expect(await refused.text()).not.toContain('listing line');

    // `/spool result <id>`: the result goes to the person's DM, and the private answer links its
    // page.
    await bot.command({
      command: '/spool',
      text: `result ${call!.toolCallId}`,
      team_id: TEAM,
      channel_id: channel,
      user_id: 'U1',
      response_url: slack.responseUrl('result-u1'),
      trigger_id: 't',
    });
    await slack.waitFor(() => slack.responses('result-u1').length === 1);
    const [answered] = slack.responseArgs('result-u1');
    expect(answered).toMatchObject({
      response_type: 'ephemeral',
      text: 'Sent you the full result in a direct message.',
    });
    expect(blocksOf(answered!).at(-1)).toMatchObject({
      type: 'actions',
      elements: [{ type: 'button', text: { text: 'View the whole result' }, url }],
    });
  });
});
