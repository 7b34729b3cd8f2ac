import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDiscord } from './support/fake-discord.ts';
import { FakeOpenAi } from './support/fake-openai.ts';
import { fileDatabaseUrl } from './support/file-database.ts';
import { BOT_USER, eventBody, FakeSlack } from './support/fake-slack.ts';
import { freePort, startSpool, until, type SpoolProcess } from './support/process.ts';
import { deliver, startSlackBot } from './support/slack-bot.ts';

let llm: FakeOpenAi;
let slack: FakeSlack;
let dataDir: string;
let port: number;
let bot: SpoolProcess;

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = (request) => ({ content: `answer to ${request.messages.at(-1)!.content}` });
  slack = await new FakeSlack().start();
  dataDir = await mkdtemp(join(tmpdir(), 'spool-observability-'));
  port = await freePort();
  bot = await startSlackBot(port, {
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_API_URL: slack.apiUrl,
    DATA_DIR: dataDir,
  });
}, 60_000);
afterAll(async () => {
  bot?.child.kill('SIGTERM');
  await bot?.done.catch(() => {});
  await Promise.all([llm.stop(), slack.stop()]);
  await rm(dataDir, { recursive: true, force: true });
});

const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);

/** Prometheus text exposition as `name{labels}` → value, comments and blank lines skipped. */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${line}`);
    samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('health, readiness and metrics on PORT, beside Slack events', () => {
  it('answers /healthz and /readyz', async () => {
    const health = await get('/healthz');
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    const ready = await get('/readyz');
    expect([ready.status, await ready.text()]).toEqual([200, 'ready\n']);
  });

  it('counts a turn, its model call and tokens, and the inbox, in Prometheus text', async () => {
    expect(
      await deliver(
        port,
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> hello`,
          ts: '900.1',
          channel: 'COBS',
        }),
      ),
    ).toBe(true);
    await slack.waitFor(() => slack.callsTo('chat.postMessage').some((m) => m.channel === 'COBS'));
    const metrics = await until(async () => {
      const response = await get('/metrics');
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const samples = parsePrometheus(await response.text());
      const done =
        samples.get('spool_turns_total{status="ok"}') === 1 &&
        samples.get('spool_replies_total{platform="slack",outcome="ok"}') === 1;
      return done && samples.get('spool_inbox_pending') === 0 ? samples : undefined;
    });
    expect(metrics.get('spool_pairing_repairs_total')).toBe(0);
    expect(metrics.get('spool_llm_request_seconds_count')).toBe(1);
    expect(metrics.get('spool_llm_tokens_total{kind="prompt"}')).toBeGreaterThan(0);
    expect(metrics.get('spool_inbox_oldest_pending_seconds')).toBe(0);
  });
});

describe('while a platform is still connecting', () => {
  it('answers /healthz at once, and /readyz 503 naming what is not ready until it is', async () => {
    const discord = await new FakeDiscord().start();
    let connect = () => {};
    discord.identified = new Promise((resolve) => (connect = resolve));
    const discordPort = await freePort();
    const env = {
      OPENAI_BASE_URL: llm.baseURL,
      // The file's database: the bot above holds the embedded one of DATA_DIR.
      DATABASE_URL: fileDatabaseUrl(),
      PORT: String(discordPort),
      DISCORD_TOKEN: 'discord-token',
      DISCORD_APPLICATION_ID: '100000000000000001',
      DISCORD_API_URL: discord.apiUrl,
    };
    const starting = startSpool([], { env, timeoutMs: 120_000 });
    starting.done.catch(() => {});
    const at = (path: string) =>
      fetch(`http://127.0.0.1:${discordPort}${path}`).then(
        async (r) => [r.status, await r.text()] as const,
        () => undefined,
      );
    try {
      // A liveness probe must not restart a bot that is only waiting for its gateway.
      expect(await until(() => at('/healthz'), 30_000)).toEqual([200, 'ok\n']);
      await until(
        async () => ((await at('/readyz'))?.[1] === 'not ready: discord\n' ? true : undefined),
        30_000,
      );
      expect(await at('/readyz')).toEqual([503, 'not ready: discord\n']);
      connect();
      await until(async () => ((await at('/readyz'))?.[0] === 200 ? true : undefined), 30_000);
    } finally {
      starting.child.kill('SIGTERM');
      await starting.done.catch(() => {});
      await discord.stop();
    }
  });
});
