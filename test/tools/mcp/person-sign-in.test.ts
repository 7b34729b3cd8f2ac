import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignInRequiredError } from '../../../src/core/errors.ts';
import { isParked, type ToolContext } from '../../../src/core/ports/tools.ts';
import { serveRoutes, type HttpEndpoint } from '../../../src/observability.ts';
import type { Database } from '../../../src/store/database.ts';
import { SealedOAuthVault, open } from '../../../src/store/credentials/oauth-vault.ts';
import { SealedPersonVault } from '../../../src/store/credentials/person-vault.ts';
import { parseMcpConfig, type McpConfig } from '../../../src/tools/mcp/config/config.ts';
import type { Person, PersonRecord } from '../../../src/tools/mcp/sign-in/person-oauth.ts';
import { personServers, SignIns } from '../../../src/tools/mcp/sign-in/sign-in.ts';
import { signInRoutes } from '../../../src/tools/mcp/sign-in/sign-in-routes.ts';
import { SignInWithSlack } from '../../../src/adapters/slack/sign-in-with-slack.ts';
import { DiscordSignIn } from '../../../src/adapters/discord/discord-sign-in.ts';
import { Browser } from '../../support/browser.ts';
import { FakeSlack, SLACK_CLIENT, SLACK_SESSION } from '../../support/fake-slack.ts';
import {
  APP_ID,
  DISCORD_CLIENT_SECRET,
  DISCORD_SESSION,
  FakeDiscord,
} from '../../support/fake-discord.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { freePort, until } from '../../support/process.ts';
import { testDatabase } from '../../support/db.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { PersonMcpServer } from '../../support/person-mcp-server.ts';

const key = randomBytes(32);
const logger = new RecordingLogger();
let db: Database;
let server: PersonMcpServer;
let slack: FakeSlack;
let slackSignIn: SignInWithSlack;
/** Spool's HTTP server, where the links point and the redirects land. */
let spoolOrigin: string;
const endpointUrl = (path: string) => `${spoolOrigin}${path}`;
let endpoint: HttpEndpoint;
let source: McpToolSource;
let signIns: SignIns;
let config: McpConfig;
/** The calls woken by a sign-in, in order. */
const woken: string[] = [];

const person = (user: string): Person => ({ platform: 'slack', workspace: 'T1', user });
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

beforeAll(async () => {
  db = await testDatabase();
  server = await new PersonMcpServer().start();
  slack = await new FakeSlack().start();
  slackSignIn = new SignInWithSlack({
    clientId: SLACK_CLIENT.id,
    clientSecret: SLACK_CLIENT.secret,
    apiUrl: slack.apiUrl,
  });
  const port = await freePort();
  spoolOrigin = `http://127.0.0.1:${port}`;
  const redirectUrl = endpointUrl('/mcp/oauth/callback');
  endpoint = await serveRoutes(
    port,
    signInRoutes(() => signIns),
  );
  config = parseMcpConfig(
    JSON.stringify({ mcpServers: { notes: { url: server.url, identity: 'person' } } }),
    join(tmpdir(), 'mcp.json'),
    {},
    new Set(),
  );
  expect(config.problems).toEqual([]);
  signIns = new SignIns(personServers(config), {
    vault: new SealedPersonVault(db.prisma, key),
    identity: { redirectUrl },
    linkUrl: endpointUrl('/mcp/sign-in'),
    platforms: { slack: slackSignIn },
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
  await slack?.stop();
  await db?.close();
});

const tool = (name: string) => {
  const found = source.tools().find((t) => t.spec.name === `notes__${name}`);
  if (!found) throw new Error(`no tool ${name} among ${source.tools().map((t) => t.spec.name)}`);
  // These servers run no tasks: a call ends or asks for a sign-in (a throw).
  return {
    run: async (...args: Parameters<typeof found.run>) => {
      const outcome = await found.run(...args);
      if (isParked(outcome)) throw new Error(`${name} parked`);
      return outcome;
    },
  };
};

/** The call's SignInRequiredError (it must throw one). */
async function signInAsked(user: string, name = 'whoami') {
  const ctx = context(user);
  const error = await tool(name)
    .run({}, ctx)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(SignInRequiredError);
  return { error: error as SignInRequiredError, callId: ctx.callId };
}

/** Each person's browser, signed in to Slack as them (in workspace T1 unless told). */
const browsers = new Map<string, Browser>();
function browser(user: string, team = 'T1'): Browser {
  const key = `${team}:${user}`;
  const found = browsers.get(key) ?? new Browser({ [slack.apiUrl]: `${SLACK_SESSION}=${key}` });
  browsers.set(key, found);
  return found;
}

/** The authorization server's answer: Spool's redirect address with its code and the link's state. */
const fromAuthorizationServer = (next: URL) =>
  next.pathname === '/mcp/oauth/callback' && !next.searchParams.get('state')?.includes('.');

/**
 * Where the authorization server sends `user`'s browser back, once it followed the link (Sign in
 * with Slack, then the authorization server, which approves at once).
 */
async function approve(link: string, user: string): Promise<string> {
  const { status, url } = await browser(user).open(link, fromAuthorizationServer);
  expect(status).toBe(302);
  expect(new URL(url).searchParams.get('code')).toBeTruthy();
  return url;
}

async function land(redirect: string, user: string): Promise<{ status: number; text: string }> {
  const { status, text } = await browser(user).open(redirect);
  return { status, text };
}

/** The person's sign-in as the table holds it, opened with the key. */
async function stored(user: string): Promise<PersonRecord | undefined> {
  const { rows } = await db.pool.query<{ sealed: string }>(
    `SELECT sealed FROM mcp_person_oauth WHERE server = 'notes' AND platform = 'slack' AND workspace = 'T1' AND user_id = $1`,
    [user],
  );
  if (!rows[0]) return undefined;
  const context = JSON.stringify(['person', 'notes', 'slack', 'T1', user]);
  return JSON.parse(open(rows[0].sealed, key, context)) as PersonRecord;
}

/** Which of `users` have a sign-in row, of any server. */
async function signedInRows(users: string[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ user_id: string }>(
    'SELECT user_id FROM mcp_person_oauth WHERE user_id = ANY($1) ORDER BY user_id',
    [users],
  );
  return rows.map((r) => r.user_id);
}

async function everyRow(): Promise<string> {
  const tables = ['mcp_person_oauth', 'mcp_sign_in', 'mcp_oauth'];
  const dumps = await Promise.all(
    tables.map((t) => db.pool.query<{ row: string }>(`SELECT t::text AS row FROM ${t} t`)),
  );
  return dumps.flatMap((d) => d.rows.map((r) => r.row)).join('\n');
}

async function signIn(user: string): Promise<string> {
  const { error, callId } = await signInAsked(user);
  const before = woken.length;
  const page = await land(await approve(error.url, user), user);
  expect(page).toEqual({
    status: 200,
    text: 'You are signed in to notes. You can go back to the thread.\n',
  });
  expect(woken.slice(before)).toEqual([callId]);
  return (await stored(user))!.tokens!.access_token;
}

describe("a server used with each person's own sign-in", () => {
  it('lists its tools, and asks a person who has not signed in for a link bound to them and the call', async () => {
    expect(
      source
        .tools()
        .map((t) => t.spec.name)
        .sort(),
    ).toEqual(['notes__whoami', 'notes__write_note']);
    const { error } = await signInAsked('UALICE');
    expect(error.server).toBe('notes');
    expect(error.reason).toBe('none');
    // The link is Spool's own page; the authorization server's comes after Sign in with Slack.
    const link = new URL(error.url);
    expect(`${link.origin}${link.pathname}`).toBe(endpointUrl('/mcp/sign-in'));
    const opened = await browser('UALICE').open(error.url, (next) => next.origin === server.origin);
    const url = new URL(opened.url);
    expect(url.origin).toBe(server.origin);
    expect(url.searchParams.get('state')).toBe(link.searchParams.get('link'));
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const state = url.searchParams.get('state')!;
    expect(state.length).toBeGreaterThanOrEqual(43);
    const { rows } = await db.pool.query(
      'SELECT server, platform, workspace, user_id, used_at FROM mcp_sign_in WHERE state = $1',
      [state],
    );
    expect(rows).toEqual([
      { server: 'notes', platform: 'slack', workspace: 'T1', user_id: 'UALICE', used_at: null },
    ]);
    // Nothing reached the server's tool.
    expect(server.calls).toEqual([]);
  });

  it('signs the person in once from the link, wakes that call exactly once, and a second use signs in nobody', async () => {
    const { error, callId } = await signInAsked('UBOB');
    const redirect = await approve(error.url, 'UBOB');
    const before = woken.length;
    expect((await land(redirect, 'UBOB')).status).toBe(200);
    const again = await land(redirect, 'UBOB');
    expect(again.status).toBe(400);
    expect(again.text).toContain('Nobody was signed in');
    expect(woken.slice(before)).toEqual([callId]);
    expect((await stored('UBOB'))?.tokens?.access_token).toMatch(/^[0-9a-f]{48}$/);
  });

  it("calls with each person's own token, never another's", async () => {
    const alice = await signIn('UALICE');
    const bob = (await stored('UBOB'))!.tokens!.access_token;
    expect(alice).not.toBe(bob);
    server.calls.length = 0;
    for (const user of ['UALICE', 'UBOB', 'UALICE', 'UBOB']) {
      const outcome = await tool('whoami').run({}, context(user));
      expect(outcome.isError).toBeFalsy();
    }
    expect(server.calls.map((c) => c.token)).toEqual([alice, bob, alice, bob]);
  });

  it('refuses an answer naming another authorization server (RFC 9207 iss), and the link is spent', async () => {
    const { error } = await signInAsked('UCAROL');
    const redirect = await approve(error.url, 'UCAROL');
    const before = woken.length;
    const forged = new URL(redirect);
    forged.searchParams.set('iss', 'https://evil.example');
    const refused = await land(forged.href, 'UCAROL');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('did not come from the authorization server of notes');
    expect((await land(redirect, 'UCAROL')).status).toBe(400);
    expect(woken.length).toBe(before);
    expect(await stored('UCAROL')).toBeUndefined();
  });

  it('asks again, with the wider scope, when the server answers 403 insufficient_scope', async () => {
    const { error } = await signInAsked('UALICE', 'write_note');
    expect(error.reason).toBe('insufficient_scope');
    const asked = await browser('UALICE').open(error.url, (next) => next.origin === server.origin);
    expect(new URL(asked.url).searchParams.get('scope')?.split(' ')).toContain('write');
    await land(await approve(error.url, 'UALICE'), 'UALICE');
    server.calls.length = 0;
    const outcome = await tool('write_note').run({}, context('UALICE'));
    expect(outcome.isError).toBeFalsy();
    expect(server.calls).toEqual([
      { tool: 'write_note', token: (await stored('UALICE'))!.tokens!.access_token },
    ]);
  });

  it('asks again when a token is revoked, and after the person signs out', async () => {
    server.revoke((await stored('UBOB'))!.tokens!.access_token);
    const revoked = await signInAsked('UBOB');
    expect(revoked.error.reason).toBe('revoked');
    const fresh = await signIn('UBOB');
    server.calls.length = 0;
    expect((await tool('whoami').run({}, context('UBOB'))).isError).toBeFalsy();
    expect(server.calls).toEqual([{ tool: 'whoami', token: fresh }]);
    expect(await signIns.logins({ platform: 'slack', workspace: 'T1' })).toEqual([
      expect.objectContaining({ server: 'notes', user: 'UALICE' }),
      expect.objectContaining({ server: 'notes', user: 'UBOB' }),
    ]);
    expect(await signIns.logout('notes', person('UBOB'))).toBe(true);
    expect(await signIns.logout('notes', person('UBOB'))).toBe(false);
    await signInAsked('UBOB');
  });

  it('wakes the call once when the same redirect reaches two replicas at once', async () => {
    // A second replica: its own pool, its own HTTP server, the same database.
    const other = await testDatabase();
    const otherWoken: string[] = [];
    const replica = new SignIns(personServers(config), {
      vault: new SealedPersonVault(other.prisma, key),
      identity: signIns.identity,
      linkUrl: endpointUrl('/mcp/sign-in'),
      platforms: { slack: slackSignIn },
      onSignedIn: (toolCallId) => void otherWoken.push(toolCallId),
      logger,
    });
    const port = await freePort();
    const otherEndpoint = await serveRoutes(
      port,
      signInRoutes(() => replica),
    );
    try {
      const { error, callId } = await signInAsked('UDAVE');
      const redirect = new URL(await approve(error.url, 'UDAVE'));
      const before = woken.length;
      const atOther = new URL(`${redirect.pathname}${redirect.search}`, `http://127.0.0.1:${port}`);
      const pages = await Promise.all([land(redirect.href, 'UDAVE'), land(atOther.href, 'UDAVE')]);
      expect(pages.map((p) => p.status).sort()).toEqual([200, 400]);
      expect([...woken.slice(before), ...otherWoken]).toEqual([callId]);
      expect(await stored('UDAVE')).toBeDefined();
    } finally {
      otherEndpoint.server.close();
      await other.close();
    }
  });

  it('signs in nobody from a link someone else opens, never reaches the authorization server, and leaves the link to its person', async () => {
    const { error, callId } = await signInAsked('UHANK');
    const before = { authorizations: server.authorizations.length, woken: woken.length };
    // Forwarded to Mallory; and opened by a UHANK of another workspace, who is someone else too.
    for (const other of [browser('UMALLORY'), browser('UHANK', 'T2')]) {
      const page = await other.open(error.url);
      expect(page.status).toBe(403);
      expect(page.text).toContain(
        'This sign-in link was sent to someone else. Nobody was signed in',
      );
    }
    expect(server.authorizations.length).toBe(before.authorizations);
    expect(await signedInRows(['UHANK', 'UMALLORY'])).toEqual([]);
    expect(woken.length).toBe(before.woken);
    const state = new URL(error.url).searchParams.get('link');
    const { rows } = await db.pool.query('SELECT used_at FROM mcp_sign_in WHERE state = $1', [
      state,
    ]);
    expect(rows).toEqual([{ used_at: null }]);
    // The person it was sent to still can, and their call goes on.
    const page = await browser('UHANK').open(error.url);
    expect(page.status).toBe(200);
    expect(page.text).toBe('You are signed in to notes. You can go back to the thread.\n');
    expect(woken.slice(before.woken)).toEqual([callId]);
    expect(await signedInRows(['UHANK', 'UMALLORY'])).toEqual(['UHANK']);
  });

  it("signs in nobody when the authorization server's page, or the platform's answer, is carried to another browser", async () => {
    const { error, callId } = await signInAsked('UIVY');
    const before = woken.length;
    // Ivy's own sign-in with Slack, handed over before her browser lands it (a planted sign-in).
    const platformAnswer = await browser('UIVY').open(
      error.url,
      (next) => next.pathname === '/mcp/oauth/callback',
    );
    const planted = await browser('UVICTOR').open(platformAnswer.url);
    expect(planted.status).toBe(403);
    expect(planted.text).toContain('Nobody was signed in');
    // The authorization server's own page, reached by Ivy's browser and forwarded.
    const page = await browser('UIVY').open(error.url, (next) => next.origin === server.origin);
    const forwarded = await browser('UVICTOR').open(page.url);
    expect(forwarded.status).toBe(403);
    expect(forwarded.text).toContain('did not start from the link Spool sent, in this browser');
    expect(await signedInRows(['UIVY', 'UVICTOR'])).toEqual([]);
    expect(woken.length).toBe(before);
    // Ivy's browser goes on from that page.
    expect((await browser('UIVY').open(page.url)).status).toBe(200);
    expect(woken.slice(before)).toEqual([callId]);
  });

  it('gives a link ahead of any call (/spool login), which signs the person in and wakes nothing', async () => {
    expect(await signIns.link('elsewhere', person('UERIN'))).toBe('unknown');
    const link = await signIns.link('notes', person('UERIN'));
    if (typeof link !== 'object') throw new Error(`no link: ${link}`);
    const before = woken.length;
    expect((await land(await approve(link.url, 'UERIN'), 'UERIN')).status).toBe(200);
    expect(woken.length).toBe(before);
    expect(await signIns.link('notes', person('UERIN'))).toBe('signed_in');
    server.calls.length = 0;
    expect((await tool('whoami').run({}, context('UERIN'))).isError).toBeFalsy();
    expect(server.calls).toEqual([
      { tool: 'whoami', token: (await stored('UERIN'))!.tokens!.access_token },
    ]);
  });

  it('keeps no token in clear in any row or log line', async () => {
    const tokens = [...new Set(server.calls.map((c) => c.token))];
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    const seen = (await everyRow()) + JSON.stringify(logger.lines);
    for (const token of tokens) expect(seen).not.toContain(token);
    // Nor the Slack app's client secret, nor the tokens Sign in with Slack gave.
    expect(seen).not.toContain(SLACK_CLIENT.secret);
    expect(seen).not.toContain('xoxp-');
    // And no PKCE verifier either: the sign-in rows hold them sealed.
    expect(await everyRow()).toMatch(/v1\./);
  });
});

describe("a server used with each person's own sign-in that lists nothing without a token", () => {
  it('lists its tools with the first sign-in, and still calls as each person', async () => {
    const strict = await new PersonMcpServer('token').start();
    const strictConfig = parseMcpConfig(
      JSON.stringify({ mcpServers: { vault: { url: strict.url, identity: 'person' } } }),
      join(tmpdir(), 'mcp.json'),
      {},
      new Set(),
    );
    const port = await freePort();
    const identity = { redirectUrl: `http://127.0.0.1:${port}/mcp/oauth/callback` };
    const desk = new SignIns(personServers(strictConfig), {
      vault: new SealedPersonVault(db.prisma, key),
      identity,
      linkUrl: `http://127.0.0.1:${port}/mcp/sign-in`,
      platforms: { slack: slackSignIn },
      onSignedIn: () => {},
      logger,
    });
    const route = await serveRoutes(
      port,
      signInRoutes(() => desk),
    );
    const strictSource = await McpToolSource.start(
      strictConfig,
      logger,
      { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 },
      { vault: new SealedOAuthVault(db.prisma, key), identity, signIns: desk },
    );
    try {
      expect(strictSource.tools()).toEqual([]);
      expect(strictSource.problems()).toEqual([
        'MCP server "vault": needs login (npm start -- mcp login vault)',
      ]);
      const link = await desk.link('vault', person('UFRANK'));
      if (typeof link !== 'object') throw new Error(`no link: ${link}`);
      expect((await land(await approve(link.url, 'UFRANK'), 'UFRANK')).status).toBe(200);
      // Listed at once with that sign-in, not at the next check 30 s later.
      const whoami = await until(() =>
        strictSource.tools().find((t) => t.spec.name === 'vault__whoami'),
      );
      expect(strictSource.problems()).toEqual([]);
      const frank = await vaultToken(desk, 'UFRANK');
      strict.calls.length = 0;
      expect(await whoami.run({}, context('UFRANK'))).toMatchObject({ isError: false });
      expect(strict.calls).toEqual([{ tool: 'whoami', token: frank }]);
      // Listing with Frank's sign-in lends it to nobody: Gina is asked to sign in.
      const gina = await whoami.run({}, context('UGINA')).catch((e: unknown) => e);
      expect(gina).toBeInstanceOf(SignInRequiredError);
      expect(strict.calls).toHaveLength(1);
    } finally {
      await strictSource.close();
      route.server.close();
      await strict.stop();
    }
  });
});

async function vaultToken(desk: SignIns, user: string): Promise<string> {
  return (await desk.vault.read('vault', person(user)))!.tokens!.access_token;
}

describe("a link sent on Discord, checked with Discord's own sign-in", () => {
  it('signs in nobody when another Discord user opens it, and its person afterwards', async () => {
    const discord = await new FakeDiscord().start();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const desk = new SignIns(personServers(config), {
      vault: new SealedPersonVault(db.prisma, key),
      identity: { redirectUrl: `${origin}/mcp/oauth/callback` },
      linkUrl: `${origin}/mcp/sign-in`,
      platforms: {
        discord: new DiscordSignIn({
          applicationId: APP_ID,
          clientSecret: DISCORD_CLIENT_SECRET,
          apiUrl: discord.apiUrl,
        }),
      },
      onSignedIn: () => {},
      logger,
    });
    const route = await serveRoutes(
      port,
      signInRoutes(() => desk),
    );
    const owner = { platform: 'discord', workspace: 'G1', user: '300000000000000001' };
    const discordBrowser = (user: string) =>
      new Browser({ [discord.apiUrl]: `${DISCORD_SESSION}=${user}` });
    try {
      const link = await desk.link('notes', owner);
      if (typeof link !== 'object') throw new Error(`no link: ${link}`);
      const authorizations = server.authorizations.length;
      const other = await discordBrowser('300000000000000002').open(link.url);
      expect(other.status).toBe(403);
      expect(other.text).toContain('This sign-in link was sent to someone else');
      expect(server.authorizations.length).toBe(authorizations);
      expect(await desk.vault.read('notes', owner)).toBeUndefined();
      const page = await discordBrowser(owner.user).open(link.url);
      expect(page.status).toBe(200);
      expect(server.authorizations.length).toBe(authorizations + 1);
      expect((await desk.vault.read('notes', owner))?.tokens?.access_token).toBeTruthy();
    } finally {
      route.server.close();
      await discord.stop();
    }
  });
});

describe('a link sent on the console, and one for a platform Spool cannot check', () => {
  it("sends the console's person straight to the authorization server, and signs in nobody for a platform with no sign-in", async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const desk = new SignIns(personServers(config), {
      vault: new SealedPersonVault(db.prisma, key),
      identity: { redirectUrl: `${origin}/mcp/oauth/callback` },
      linkUrl: `${origin}/mcp/sign-in`,
      platforms: { console: 'local' },
      onSignedIn: () => {},
      logger,
    });
    const route = await serveRoutes(
      port,
      signInRoutes(() => desk),
    );
    const local = { platform: 'console', workspace: 'local', user: 'operator' };
    const unchecked = { platform: 'discord', workspace: 'G1', user: '300000000000000009' };
    try {
      const authorizations = server.authorizations.length;
      const other = await desk.link('notes', unchecked);
      if (typeof other !== 'object') throw new Error(`no link: ${other}`);
      const refused = await new Browser().open(other.url);
      expect(refused.status).toBe(500);
      expect(refused.text).toContain('Nobody was signed in');
      expect(server.authorizations.length).toBe(authorizations);
      const link = await desk.link('notes', local);
      if (typeof link !== 'object') throw new Error(`no link: ${link}`);
      expect((await new Browser().open(link.url)).status).toBe(200);
      expect(server.authorizations.length).toBe(authorizations + 1);
      expect((await desk.vault.read('notes', local))?.tokens?.access_token).toBeTruthy();
      expect(await desk.vault.read('notes', unchecked)).toBeUndefined();
    } finally {
      route.server.close();
    }
  });
});
