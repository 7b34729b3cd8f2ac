import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ID, FakeDiscord } from './support/fake-discord.ts';
import { scratchDatabase } from './support/db.ts';
import { FakeOpenAi } from './support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from './support/fake-slack.ts';
import { freePort, runSpool, startSpool } from './support/process.ts';

let llm: FakeOpenAi;
let slack: FakeSlack;
let discord: FakeDiscord;
let dataDir: string;

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  slack = await new FakeSlack().start();
  discord = await new FakeDiscord().start();
  dataDir = await mkdtemp(join(tmpdir(), 'spool-main-'));
});
afterAll(async () => {
  await Promise.all([llm.stop(), slack.stop(), discord.stop()]);
  await rm(dataDir, { recursive: true, force: true });
});

/** `npm start` with Slack over Socket Mode and Discord at `discordApiUrl`. */
function startWithPlatforms(discordApiUrl: string) {
  const spool = startSpool([], {
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      DATA_DIR: dataDir,
      SLACK_BOT_TOKEN: 'xoxb-main-test-token',
      SLACK_APP_TOKEN: 'xapp-main-test-token',
      SLACK_API_URL: slack.apiUrl,
      DISCORD_TOKEN: 'discord-main-test-token',
      DISCORD_APPLICATION_ID: APP_ID,
      DISCORD_API_URL: discordApiUrl,
    },
  });
  let stderr = '';
  spool.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const logged = async (...needles: string[]) => {
    const deadline = Date.now() + 45_000;
    while (!needles.every((n) => stderr.includes(n)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    return stderr;
  };
  return { ...spool, logged };
}

/** A mention over Socket Mode, answered in `channel`. */
async function mentionAnswered(channel: string, reply: string): Promise<void> {
  llm.enqueue({ content: reply });
  await slack.sendSocketEvent(
    eventBody({ type: 'app_mention', user: 'U1', text: `<@${BOT_USER}> hi`, ts: '42.1', channel }),
  );
  await slack.waitFor(() =>
    slack.callsTo('chat.postMessage').some((m) => m.channel === channel && m.text === reply),
  );
}

describe('npm start with platform credentials', () => {
  it('serves Slack and Discord together, then shuts down cleanly on SIGTERM', async () => {
    const spool = startWithPlatforms(discord.apiUrl);
    expect(await spool.logged('Slack: connected', 'Discord: connected')).toContain(
      'Invite: https://discord.com/oauth2/authorize',
    );
    await mentionAnswered('CMAIN', 'from the real process');
    spool.child.kill('SIGTERM');
    const { code, stderr } = await spool.done;
    expect(code).toBe(0);
    for (const token of ['xoxb-main-test-token', 'xapp-main-test-token', 'discord-main-test-token'])
      expect(stderr).not.toContain(token);
  });

  it('keeps serving Slack when Discord cannot connect', async () => {
    const spool = startWithPlatforms('http://127.0.0.1:9/api'); // nothing listens on the discard port
    expect(await spool.logged('Slack: connected', 'Discord could not start')).toContain(
      'Discord could not start',
    );
    await mentionAnswered('CMAIN2', 'slack still works');
    spool.child.kill('SIGTERM');
    expect((await spool.done).code).toBe(0);
  });

  it('names an unreachable Slack Web API at once and exits, instead of retrying in the logs', async () => {
    const run = await runSpool([], {
      env: {
        OPENAI_BASE_URL: llm.baseURL,
        DATA_DIR: dataDir,
        SLACK_BOT_TOKEN: 'xoxb-main-test-token',
        SLACK_SIGNING_SECRET: 'secret',
        SLACK_API_URL: 'http://127.0.0.1:9/api',
        PORT: String(await freePort()),
      },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "Slack could not start: Slack's Web API at http://127.0.0.1:9/api did not answer auth.test (",
    );
    expect(run.stderr).not.toContain('xoxb-main-test-token');
  });
});

describe('the built artifact', () => {
  // Every other process of the run is `npm start` too: dist/ as the run compiled it, cleanly, from
  // the source as it is now (test/support/build.ts).
  it('npm start runs dist/, npm run dev runs src/ through tsx: migrations, a console turn, the exit status', async () => {
    for (const [how, source] of [
      ['built', false],
      ['source', true],
    ] as const) {
      llm.enqueue({ content: `${how} and running` });
      // An empty database each, which the start migrates.
      const scratch = await scratchDatabase(`spool_main_${how}`);
      try {
        const run = await runSpool(['chat', '--session', how], {
          source,
          input: 'hello\n',
          env: { OPENAI_BASE_URL: llm.baseURL, DATABASE_URL: scratch.url },
        });
        expect(run.stdout).toBe(`${how} and running\n`);
        expect(run.code).toBe(0);
      } finally {
        await scratch.drop();
      }
    }
  });
});
