import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackChannelAccess } from '../../../src/adapters/slack/channel-access.ts';

/** conversations.members as Slack answers it: two members a page, a cursor to the next. */
const MEMBERS: Record<string, string[]> = {
  C1: ['U1', 'U2', 'U3', 'U4', 'U5'],
  D1: ['U9', 'UBOT'],
};
let server: Server;
let client: webApi.WebClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const members = MEMBERS[form.get('channel') ?? ''];
      const from = Number(form.get('cursor') || 0);
      const answer = members
        ? {
            ok: true,
            members: members.slice(from, from + 2),
            response_metadata: { next_cursor: from + 2 < members.length ? String(from + 2) : '' },
          }
        : { ok: false, error: 'channel_not_found' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  client = new webApi.WebClient('xoxb-test', {
    slackApiUrl: `http://127.0.0.1:${port}/api/`,
    retryConfig: { retries: 0 },
  });
});
afterAll(() => server.close());

describe('slackChannelAccess', () => {
  const where = (channel: string) => ({ platform: 'slack', workspace: 'T1', channel });

  it("reads a channel's members page by page", async () => {
    const access = slackChannelAccess(async () => client);
    expect(await access.canRead('U5', where('C1'))).toBe(true);
    expect(await access.canRead('U6', where('C1'))).toBe(false);
  });

  it('lets a direct message be read by its own person alone', async () => {
    const access = slackChannelAccess(async () => client);
    expect(await access.canRead('U9', where('D1'))).toBe(true);
    expect(await access.canRead('U1', where('D1'))).toBe(false);
  });

  it('reads a channel Slack will not show as no one’s', async () => {
    expect(await slackChannelAccess(async () => client).canRead('U1', where('C404'))).toBe(false);
  });
});
