import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { createScratchDatabase, queryAt } from '../../support/global-db.ts';
import { freePort } from '../../support/process.ts';
import { deliver, slowToolConfig, slowToolModel, startSlackBot } from '../../support/slack-bot.ts';

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_shutdown');
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-shutdown-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: scratch.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DATA_DIR: dir,
  };
});
afterAll(async () => {
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

const repliesIn = (channel: string) =>
  slack
    .callsTo('chat.postMessage')
    .filter((m) => m.channel === channel)
    .map((m) => String(m.text));
const toolStarted = (text: string) =>
  llm.requests.some(
    (r) => r.messages.at(-1)?.role === 'user' && r.messages.at(-1)?.content === text,
  );

const inboxStatus = async (messageKey: string) =>
  (
    await queryAt<{ status: string }>(
      scratch.url,
      'SELECT status FROM inbox WHERE message_key = $1',
      [messageKey],
    )
  )[0]?.status;

describe('SIGTERM', () => {
  it('lets a running turn finish within the grace time, then exits cleanly', async () => {
    llm.fallback = slowToolModel(2);
    const port = await freePort();
    const bot = await startSlackBot(port, { ...env, SHUTDOWN_GRACE_MS: '20000' });
    expect(
      await deliver(
        port,
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> graceful`,
          ts: '10.1',
          channel: 'CGRACE',
        }),
      ),
    ).toBe(true);
    await slack.waitFor(() => toolStarted('graceful'));
    bot.child.kill('SIGTERM');
    expect((await bot.done).code).toBe(0);
    expect(repliesIn('CGRACE')).toEqual(['answer to graceful']);
    expect(await inboxStatus('CGRACE:10.1')).toBe('answered');
  });

  it('leaves a turn that outlasts the grace time in the inbox, and the next start answers it once', async () => {
    llm.fallback = slowToolModel(60);
    const port = await freePort();
    // A 10-minute lease: only its release on the way out lets the next start in before the test
    // times out.
    const first = await startSlackBot(port, {
      ...env,
      SHUTDOWN_GRACE_MS: '300',
      LEASE_TTL_MS: '600000',
    });
    expect(
      await deliver(
        port,
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> cut short`,
          ts: '20.1',
          channel: 'CCUT',
        }),
      ),
    ).toBe(true);
    await slack.waitFor(() => toolStarted('cut short'));
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(0);
    expect(await inboxStatus('CCUT:20.1')).toBe('pending');
    expect(repliesIn('CCUT')).toEqual([]);

    llm.fallback = slowToolModel(1);
    const second = await startSlackBot(port, env);
    await slack.waitFor(() => repliesIn('CCUT').length > 0, 30_000);
    second.child.kill('SIGTERM');
    expect((await second.done).code).toBe(0);
    expect(repliesIn('CCUT')).toEqual(['answer to cut short']);
    expect(llm.rejections).toEqual([]);
  });
});
