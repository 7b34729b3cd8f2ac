import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import { scratchDatabase } from '../../support/db.ts';
import { queryAt } from '../../support/global-db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, slowToolConfig, slowToolModel, startSlackBot } from '../../support/slack-bot.ts';

/**
 * A Stop taken by one replica while another runs the turn, and the one running it SIGKILLed
 * before it could act: the stop is a row, so whoever takes the thread next ends the turn with one
 * note, and runs nothing of it again.
 */
let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;
const bots: SpoolProcess[] = [];

beforeAll(async () => {
  scratch = await scratchDatabase('spool_stop_restart');
  llm = await new FakeOpenAi().start();
  llm.fallback = slowToolModel(60);
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-stop-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
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

const inboxRow = async (messageKey: string) =>
  (
    await queryAt<{ status: string; stopped_by: string }>(
      scratch.url,
      'SELECT status, stopped_by FROM inbox WHERE message_key = $1',
      [messageKey],
    )
  )[0]!;

describe('a Stop whose turn runs on a replica that is SIGKILLed', () => {
  it('is honoured once by the next holder of the thread: one note, and the turn is not run again', async () => {
    const [runningPort, otherPort] = await Promise.all([freePort(), freePort()]);
    const [running, other] = await Promise.all([
      startSlackBot(runningPort, env),
      startSlackBot(otherPort, env),
    ]);
    bots.push(running, other);
    const ch = 'CSTOPKILL';
    expect(
      await deliver(
        runningPort,
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> take your time`,
          ts: '2100.1',
          channel: ch,
        }),
      ),
    ).toBe(true);
    // The turn is in its slow tool, on whichever of the two took the thread.
    await slack.waitFor(
      () =>
        slack
          .callsTo('assistant.threads.setStatus')
          .some((c) => c.channel_id === ch && String(c.status).startsWith('is running')),
      30_000,
    );
    const asked = llm.requests.length;
    expect(
      await deliver(
        otherPort,
        eventBody({
          type: 'agent_session_stopped',
          channel: ch,
          thread_ts: '2100.1',
          user: 'U1',
          streaming_message_ts: [],
          ts: '2100.2',
        }),
      ),
    ).toBe(true);
    // Both are killed at once: whichever ran the turn had under a second to see the Stop.
    running.child.kill('SIGKILL');
    other.child.kill('SIGKILL');
    await Promise.all([running.done.catch(() => {}), other.done.catch(() => {})]);
    expect(await inboxRow(`${ch}:2100.1`)).toMatchObject({ stopped_by: 'U1' });

    const next = await startSlackBot(await freePort(), env);
    bots.push(next);
    const note = () =>
      slack.callsTo('chat.postMessage').filter((m) => m.channel === ch && m.text === STOPPED_REPLY);
    await until(async () =>
      (await inboxRow(`${ch}:2100.1`)).status === 'answered' ? true : undefined,
    );
    expect(note()).toHaveLength(1);
    expect(slack.callsTo('chat.postMessage').filter((m) => m.channel === ch)).toHaveLength(1);
    // The stopped turn never asked the model again.
    expect(llm.requests.length).toBe(asked);
  });
});
