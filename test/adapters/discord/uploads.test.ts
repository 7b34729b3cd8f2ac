import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { FakeDiscord } from '../../support/fake-discord.ts';

// Uploads through discord.js on whichever Node runs this (CI: 22 and 26). Nothing here imports
// undici or discord.js before the test does: which copy of undici loads first decides the
// process-wide dispatcher, and that is what is under test. The tests run in order; the second
// loads undici 7 (a proxy is set).

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const dispatcherNow = () => (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];

let discord: FakeDiscord;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
});
afterAll(() => discord.stop());

const upload = async (rest: import('discord.js').REST, channel: string) => {
  await rest.post(`/channels/${channel}/messages`, {
    body: { content: 'the log' },
    files: [{ name: 'log.txt', data: Buffer.from('line 1\nline 2\n') }],
  });
  const call = discord.calls.find((c) => c.path === `/channels/${channel}/messages`);
  return { body: call?.body, files: call?.files?.map(({ name, content }) => ({ name, content })) };
};

describe('files uploaded through discord.js', () => {
  it("arrive as multipart when Spool's proxy support is loaded without a proxy: it leaves the process-wide dispatcher alone", async () => {
    const before = dispatcherNow(); // Node 24 installs its own early; Node 20 none until used
    const { proxyFromEnv } = await import('../../../src/proxy.ts');
    await import('../../../src/adapters/shared/fetch-file.ts');
    expect(proxyFromEnv({})).toBeUndefined();
    const afterSpool = dispatcherNow();

    const { REST } = await import('discord.js');
    const rest = new REST({ api: discord.apiUrl, retries: 0 }).setToken('bot-token');
    expect(await upload(rest, '500000000000000001')).toEqual({
      body: { content: 'the log' },
      files: [{ name: 'log.txt', content: 'line 1\nline 2\n' }],
    });
    expect(afterSpool).toBe(before);
  });

  it("arrive as multipart through a proxy (undici 7's agent) with the adapter's request", async () => {
    const proxy = await startConnectProxy();
    try {
      const { proxyFromEnv } = await import('../../../src/proxy.ts');
      const { discordRequest } = await import('../../../src/adapters/discord/rest-request.ts');
      const { REST } = await import('discord.js');
      const agent = proxyFromEnv({ HTTP_PROXY: proxy.url });
      const rest = new REST({
        api: discord.apiUrl,
        retries: 0,
        agent: agent as unknown as import('discord.js').RESTOptions['agent'],
        makeRequest: discordRequest,
      }).setToken('bot-token');
      expect(await upload(rest, '500000000000000002')).toEqual({
        body: { content: 'the log' },
        files: [{ name: 'log.txt', content: 'line 1\nline 2\n' }],
      });
      expect(proxy.tunnels).toEqual([new URL(discord.apiUrl).host]);
    } finally {
      proxy.stop();
    }
  });
});
