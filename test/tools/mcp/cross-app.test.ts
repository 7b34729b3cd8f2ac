import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignInRequiredError } from '../../../src/core/errors.ts';
import { isParked, type ToolContext } from '../../../src/core/ports/tools.ts';
import { serveRoutes, type HttpEndpoint } from '../../../src/observability.ts';
import type { Database } from '../../../src/store/database.ts';
import { SealedOAuthVault } from '../../../src/store/credentials/oauth-vault.ts';
import { SealedPersonVault } from '../../../src/store/credentials/person-vault.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { signInServers } from '../../../src/tools/mcp/sign-in/cross-app.ts';
import { SignIns } from '../../../src/tools/mcp/sign-in/sign-in.ts';
import { signInRoutes } from '../../../src/tools/mcp/sign-in/sign-in-routes.ts';
import { Browser } from '../../support/browser.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { testDatabase } from '../../support/db.ts';
import { EnterpriseIdp } from '../../support/enterprise-idp.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { PersonMcpServer } from '../../support/person-mcp-server.ts';
import { freePort } from '../../support/process.ts';

const key = randomBytes(32);
const logger = new RecordingLogger();
let db: Database;
let idp: EnterpriseIdp;
let server: PersonMcpServer;
/** A server that lists its tools only with a token. */
let closed: PersonMcpServer;
let endpoint: HttpEndpoint;
let source: McpToolSource;
let signIns: SignIns;
const woken: string[] = [];

let calls = 0;
const context = (user: string): ToolContext & { callId: string } => ({
  conversation: {
    id: '00000000-0000-0000-0000-000000000000',
    platform: 'slack',
    workspace: 'T1',
    channel: 'C1',
    thread: '1.0',
  },
  turn: 1,
  callId: `call_${String(++calls).padStart(32, '0')}`,
  user,
  signal: new AbortController().signal,
  reading: { transcript: [], viewChars: 200_000 },
});

/** whoami, as the model would call it for `user`: its answer, or the sign-in it asks for. */
async function whoami(user: string, ctx = context(user), on = 'notes') {
  const tool = source.tools().find((t) => t.spec.name === `${on}__whoami`);
  if (!tool) throw new Error(`${on}__whoami is not offered`);
  try {
    const outcome = await tool.run({}, ctx);
    if (isParked(outcome)) throw new Error('whoami parked');
    return outcome;
  } catch (error) {
    if (error instanceof SignInRequiredError) return error;
    throw error;
  }
}

/**
 * The person follows the link in a browser of their own and approves at the identity provider;
 * the browser lands on Spool's redirect.
 */
async function signIn(user: string, link: string) {
  idp.signingInAs = user;
  return new Browser().open(link);
}

beforeAll(async () => {
  db = await testDatabase();
  idp = await new EnterpriseIdp('spool-at-idp', 'idp-secret').start();
  server = await new PersonMcpServer('open', idp).start();
  closed = await new PersonMcpServer('token', idp).start();
  const port = await freePort();
  const redirectUrl = `http://127.0.0.1:${port}/mcp/oauth/callback`;
  endpoint = await serveRoutes(
    port,
    signInRoutes(() => signIns),
  );
  const config = parseMcpConfig(
    JSON.stringify({
      identityProvider: {
        name: 'okta',
        issuer: idp.origin,
        clientId: idp.clientId,
        clientSecret: '${IDP_SECRET}',
      },
      mcpServers: {
        notes: {
          url: server.url,
          identity: 'person',
          oauth: {
            grant: 'cross_app_access',
            clientId: 'spool-mcp',
            clientSecret: 'mcp-secret',
            issuer: server.origin,
          },
        },
        closed: {
          url: closed.url,
          identity: 'person',
          oauth: {
            grant: 'cross_app_access',
            clientId: 'spool-mcp',
            clientSecret: 'mcp-secret',
            issuer: closed.origin,
          },
        },
        // The same server, said to be authorized by another: Spool's secret is sent to neither.
        misnamed: {
          url: server.url,
          identity: 'person',
          oauth: {
            grant: 'cross_app_access',
            clientId: 'spool-mcp',
            clientSecret: 'mcp-secret',
            issuer: 'https://auth.elsewhere.test',
          },
        },
      },
    }),
    join(tmpdir(), 'mcp.json'),
    { IDP_SECRET: idp.clientSecret },
    new Set(),
  );
  expect(config.problems).toEqual([]);
  signIns = new SignIns(signInServers(config), {
    vault: new SealedPersonVault(db.prisma, key),
    identity: { redirectUrl },
    linkUrl: `http://127.0.0.1:${port}/mcp/sign-in`,
    // Who follows a link is checked with the chat platform's own sign-in (person-sign-in.test):
    // here the link goes straight on to the identity provider, as the console's does.
    platforms: { slack: 'local' },
    onSignedIn: (toolCallId) => void woken.push(toolCallId),
    logger,
  });
  source = await McpToolSource.start(
    config,
    logger,
    { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 },
    { vault: new SealedOAuthVault(db.prisma, key), identity: { redirectUrl }, signIns },
  );
});
afterAll(async () => {
  await source?.close();
  endpoint?.server.close();
  await server?.stop();
  await closed?.stop();
  await idp?.stop();
  await db?.close();
});

/** The exchanges the identity provider answered for `on`. */
const exchangesFor = (on: PersonMcpServer) => idp.exchanges.filter((e) => e.resource === on.url);

describe('cross-app access: a person signed in to the enterprise identity provider', () => {
  it('leaves a server that lists only with a token waiting until someone signs in', () => {
    expect(source.problems()).toEqual([expect.stringMatching(/^MCP server "closed": needs login/)]);
    expect(logger.messages()).toContain(
      'MCP server "closed" lists its tools once someone has signed in to the identity provider',
    );
  });

  it('is sent a link to the identity provider, once, and then each call carries their own token', async () => {
    const first = context('alice');
    const asked = await whoami('alice', first);
    expect(asked).toBeInstanceOf(SignInRequiredError);
    const { server: to, url, reason } = asked as SignInRequiredError;
    expect({ to, reason }).toEqual({ to: 'okta', reason: 'none' });
    expect(new URL(url).pathname).toBe('/mcp/sign-in');

    const page = await signIn('alice', url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('You are signed in to okta');
    expect(woken).toEqual([first.callId]);

    // The ID token is kept sealed: neither it nor any token is readable in the row.
    const row = await db.prisma.mcpPersonOAuth.findFirstOrThrow({
      where: { server: 'okta', userId: 'alice' },
    });
    expect(row.issuer).toBe(idp.origin);
    expect(Buffer.from(row.sealed).toString('latin1')).not.toContain('eyJ');

    const answer = await whoami('alice', first);
    expect(answer).toMatchObject({ isError: false });
    const token = server.calls.at(-1)!.token;
    expect(server.subjects.get(token)).toBe('alice');
    expect(exchangesFor(server)).toEqual([{ sub: 'alice', resource: server.url }]);

    // The server's token is kept until it expires: the next call exchanges nothing.
    await whoami('alice');
    expect(server.calls.at(-1)!.token).toBe(token);
    expect(exchangesFor(server)).toHaveLength(1);
  });

  it("lists the other server's tools with that first sign-in, and calls it as each person", async () => {
    await expect.poll(() => source.tools().map((t) => t.spec.name)).toContain('closed__whoami');
    expect(source.problems()).toEqual([]);
    expect(exchangesFor(closed)).toEqual([{ sub: 'alice', resource: closed.url }]);
    expect(await whoami('alice', context('alice'), 'closed')).toMatchObject({ isError: false });
    expect(closed.subjects.get(closed.calls.at(-1)!.token)).toBe('alice');
  });

  it("never lends one person's token to another: Bob is asked to sign in himself", async () => {
    const asked = await whoami('bob');
    expect(asked).toBeInstanceOf(SignInRequiredError);
    expect((asked as SignInRequiredError).server).toBe('okta');
    await signIn('bob', (asked as SignInRequiredError).url);
    await whoami('bob');
    expect(server.subjects.get(server.calls.at(-1)!.token)).toBe('bob');
  });

  it('signs in ahead of any call (/spool login okta), and the next call asks nothing', async () => {
    const carol = { platform: 'slack', workspace: 'T1', user: 'carol' };
    const link = await signIns.link('okta', carol);
    expect(link).toMatchObject({ url: expect.stringContaining('/mcp/sign-in?link=') });
    const page = await signIn('carol', (link as { url: string }).url);
    expect(page.status).toBe(200);
    expect(await signIns.link('okta', carol)).toBe('signed_in');
    expect(await whoami('carol')).toMatchObject({ isError: false });
    expect(server.subjects.get(server.calls.at(-1)!.token)).toBe('carol');
  });

  it('sends its client secret to no authorization server but the one mcp.json names', async () => {
    const granted = server.subjects.size;
    const exchanged = idp.exchanges.length;
    const outcome = await whoami('carol', context('carol'), 'misnamed');
    expect(outcome).toMatchObject({
      isError: true,
      content: expect.stringContaining('Authorization server mismatch'),
    });
    expect(server.subjects.size).toBe(granted);
    expect(idp.exchanges).toHaveLength(exchanged);
  });

  it('asks again when the identity provider no longer takes the sign-in kept', async () => {
    const before = server.calls.at(-1)!.token;
    // Alice's server token is revoked, and her ID token with it: the exchange is refused.
    server.revoke([...server.subjects].find(([, sub]) => sub === 'alice')![0]);
    idp.revoke('alice');
    const asked = await whoami('alice');
    expect(asked).toBeInstanceOf(SignInRequiredError);
    expect((asked as SignInRequiredError).server).toBe('okta');
    expect(server.calls.at(-1)!.token).toBe(before);
    // The sign-in refused is forgotten: the link asks anew.
    expect(
      await db.prisma.mcpPersonOAuth.count({ where: { server: 'okta', userId: 'alice' } }),
    ).toBe(0);
  });

  it('logs no token nor secret in clear', () => {
    expect(logger.lines.length).toBeGreaterThan(0);
    const logged = JSON.stringify(logger.lines);
    expect(logged).not.toContain('eyJ');
    expect(logged).not.toContain('mcp-secret');
    expect(logged).not.toContain('idp-secret');
  });
});
