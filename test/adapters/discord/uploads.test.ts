import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { FakeDiscord } from '../../support/fake-discord.ts';
import { REPO_ROOT } from '../../support/process.ts';

// Uploads through discord.js on whichever Node runs this (CI: 22 and 26). Which copy of undici loads
// first decides the process-wide dispatcher, and that is what the first test is about: it runs in a
// process of its own (test/fixtures/discord-upload-probe.mjs), as the test files share their
// worker's modules. The second loads undici 7 (a proxy is set) here.

const PROBE = fileURLToPath(new URL('../../fixtures/discord-upload-probe.mjs', import.meta.url));

/** Runs the probe against the fake Discord; resolves with its exit code, stdout and stderr. */
function runProbe(
  api: string,
  channel: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PROBE, api, channel], { cwd: REPO_ROOT });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let discord: FakeDiscord;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
});
afterAll(() => discord.stop());

/** Uploads a file through `rest`, as the probe does. */
const upload = (rest: import('discord.js').REST, channel: string) =>
  rest.post(`/channels/${channel}/messages`, {
    body: { content: 'the log' },
    files: [{ name: 'log.txt', data: Buffer.from('line 1\nline 2\n') }],
  });

/** What the fake Discord took on `channel`: the message's body and its files. */
const received = (channel: string) => {
  const call = discord.calls.find((c) => c.path === `/channels/${channel}/messages`);
  return { body: call?.body, files: call?.files?.map(({ name, content }) => ({ name, content })) };
};
const UPLOADED = {
  body: { content: 'the log' },
  files: [{ name: 'log.txt', content: 'line 1\nline 2\n' }],
};

describe('files uploaded through discord.js', () => {
  it("arrive as multipart when Spool's proxy support is loaded without a proxy: it leaves the process-wide dispatcher alone", async () => {
    const channel = '500000000000000001';
    const probe = await runProbe(discord.apiUrl, channel);
    expect(probe.stderr).toBe('');
    expect(probe.code).toBe(0);
    expect(JSON.parse(probe.stdout)).toEqual({ proxyMade: false, dispatcherChanged: false });
    expect(received(channel)).toEqual(UPLOADED);
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
      await upload(rest, '500000000000000002');
      expect(received('500000000000000002')).toEqual(UPLOADED);
      expect(proxy.tunnels).toEqual([new URL(discord.apiUrl).host]);
    } finally {
      proxy.stop();
    }
  });
});
