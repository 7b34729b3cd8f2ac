import type { Page } from 'playwright-core';
import { Client } from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { discordChannelAccess } from '../../src/adapters/discord/channel-access.ts';
import { DiscordSignIn } from '../../src/adapters/discord/discord-sign-in.ts';
import { serveRoutes, type HttpEndpoint } from '../../src/observability.ts';
import type { Database } from '../../src/store/database.ts';
import { storeToolResult } from './operator-rows.ts';
import { openWebPages } from '../../src/web/open.ts';
import { webRoutes } from '../../src/web/routes.ts';
import { openChromium, seriousViolations, shoot } from '../support/chromium.ts';
import { testDatabase, testSearch } from '../support/db.ts';
import {
  APP_ID,
  DISCORD_CLIENT_SECRET,
  DISCORD_SESSION,
  FakeDiscord,
} from '../support/fake-discord.ts';
import { silentLogger } from '../support/logger.ts';
import { freePort } from '../support/process.ts';

/**
 * Signing in to the pages with Discord, in Chromium, through the fake Discord's OAuth2 page: back
 * to the page asked for (and to no address off Spool), and the operator pages of a Discord admin's
 * own servers, asked of Discord over REST as the adapter asks.
 */
const G1 = '400000000000000101';
const G2 = '400000000000000102';
const G3 = '400000000000000103';
const G4 = '400000000000000104';
const G5 = '400000000000000105';
/** The servers' names, as Discord lists them: markup, one name twice, and G5's none at all. */
const NAMES = { G1: '<b>Ops</b>\u202e', G2: 'Secret', G3: 'Team', G4: 'Team' };
/**
 * An admin the policy names, a member of G1, G3, G4 and G5; a member of G1 alone, an admin of
 * nothing.
 */
const ADMIN = '300000000000000101';
const MEMBER = '300000000000000102';
/** A member of one server alone, past Discord's first page of Spool's servers (G_FAR). */
const FAR = '300000000000000103';
const G_FAR = '499999999999999999';
const CALL = 'call_discord_g1_result';
/** MEMBER's direct message with Spool, and a result in it. */
const DM_MEMBER = '600000000000000102';
const CALL_DM = 'call_discord_dm_result';

let db: Database;
let discord: FakeDiscord;
let client: Client;
let endpoint: HttpEndpoint;
let origin: string;
let browser: Awaited<ReturnType<typeof openChromium>>;
let page: Page;

/** Stores a tool call and its whole result in `channel` of `workspace`, as a turn does. */
const storeResult = (workspace: string, channel: string, call: string, content: string) =>
  storeToolResult(
    db,
    { platform: 'discord', workspace, channel, thread: 'web-discord' },
    call,
    content,
  );

beforeAll(async () => {
  db = await testDatabase();
  discord = await new FakeDiscord().start();
  discord.guilds.push(
    { id: G1, name: NAMES.G1 },
    { id: G2, name: NAMES.G2 },
    { id: G3, name: NAMES.G3 },
    { id: G4, name: NAMES.G4 },
    { id: G5 },
  );
  for (const g of [G1, G3, G4, G5]) discord.memberRoles.set(`${g}/${ADMIN}`, []);
  discord.memberRoles.set(`${G1}/${MEMBER}`, []);
  const g1 = await storeResult(G1, '500000000000000101', CALL, 'the whole listing of G1');
  await storeResult('dm', DM_MEMBER, CALL_DM, 'the whole listing of a DM');
  discord.dms.set(DM_MEMBER, MEMBER);
  const usage = (workspace: string, channel: string, userId: string, tokens: number) => ({
    platform: 'discord',
    workspace,
    channel,
    userId,
    conversationId: g1.id,
    model: 'gpt-4o',
    promptTokens: tokens,
    completionTokens: 0,
    totalTokens: tokens,
  });
  await db.prisma.llmUsage.createMany({
    data: [
      usage(G1, 'C-G1-ADMIN', ADMIN, 1_000),
      usage(G1, 'C-G1-MEMBER', MEMBER, 300),
      usage(G2, 'C-G2-SECRET', ADMIN, 9_000),
      usage(G_FAR, 'C-FAR-OWN', FAR, 200),
      usage('dm', 'D-ADMIN-DM', ADMIN, 400),
      usage('dm', 'D-MEMBER-DM', MEMBER, 50),
    ],
  });
  client = new Client({ intents: [], rest: { api: discord.apiUrl } });
  client.rest.setToken('bot-token');
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const pages = openWebPages(
    { enabled: true, publicUrl: origin, sessionMs: 3_600_000, pageChars: 50_000 },
    db,
    {
      signIns: {
        discord: new DiscordSignIn({
          applicationId: APP_ID,
          clientSecret: DISCORD_CLIENT_SECRET,
          apiUrl: discord.apiUrl,
        }),
      },
      access: new Map([['discord', discordChannelAccess(client)]]),
      admins: [ADMIN],
      search: testSearch(db),
      logger: silentLogger,
      operators: {
        policy: { admins: [ADMIN] },
        cancelSchedule: () => Promise.resolve(undefined),
        replica: 'web-discord-test',
        notReady: () => Promise.resolve([]),
        mcpServers: () => [],
        now: () => new Date(),
      },
    },
  );
  endpoint = await serveRoutes(
    port,
    webRoutes(() => pages),
  );
  browser = await openChromium();
  page = await browser.context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  endpoint?.server.close();
  await client?.destroy();
  await discord?.stop();
  await db?.close();
});

/** A browser signed in to Discord (the fake's page reads its cookie) as `user`, and not to Spool. */
async function signedInToDiscordAs(user: string): Promise<void> {
  await browser.context.clearCookies();
  await browser.context.addCookies([{ name: DISCORD_SESSION, value: user, url: discord.apiUrl }]);
}

/** Signs in with Discord from the sign-in page the browser is on; the path it lands on. */
async function signInWithDiscord(): Promise<string> {
  await page.getByRole('link', { name: 'Sign in with Discord' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/web/sign-in'));
  return `${new URL(page.url()).pathname}${new URL(page.url()).search}`;
}

const mainText = async () => (await page.locator('main').innerText()).replace(/\s+/g, ' ');

describe('signing in to the pages with Discord, in Chromium', () => {
  beforeEach(() => signedInToDiscordAs(ADMIN));

  it("returns someone who followed a result's link signed out to that result", async () => {
    await page.goto(`${origin}/web/results/${CALL}`);
    expect(new URL(page.url()).pathname).toBe('/web/sign-in');
    expect(await page.content()).not.toContain('whole listing');
    expect(await signInWithDiscord()).toBe(`/web/results/${CALL}`);
    expect(await mainText()).toContain('the whole listing of G1');
  });

  it('lands on the home page from a return address off Spool, plain or encoded', async () => {
    for (const hostile of [
      '//evil.example/web/x',
      'https://evil.example/web/x',
      '/\\evil.example',
      '/web/%2F%2Fevil.example',
      '/web/%5Cevil.example',
    ]) {
      await signedInToDiscordAs(ADMIN);
      // By the sign-in page's address, and by the link that begins the sign-in.
      await page.goto(`${origin}/web/sign-in?${new URLSearchParams({ to: hostile })}`);
      expect(await signInWithDiscord(), hostile).toBe('/web/');
      await signedInToDiscordAs(ADMIN);
      await page.goto(`${origin}/web/sign-in/discord?${new URLSearchParams({ to: hostile })}`);
      await page.waitForURL((url) => !url.pathname.startsWith('/web/sign-in'));
      expect(new URL(page.url()).href, hostile).toBe(`${origin}/web/`);
    }
  });
});

describe('the operator pages of a Discord sign-in', () => {
  it("show an admin each of their own servers by name to choose from, and none of another's", async () => {
    await signedInToDiscordAs(ADMIN);
    await page.goto(`${origin}/web/usage`);
    await signInWithDiscord();
    expect(new URL(page.url()).pathname).toBe('/web/usage');
    // Names as text, their unseen characters named; the id beside a name two servers have, and
    // for a server Discord gave none.
    const servers = [`<b>Ops</b>U+202E`, `Team (${G3})`, `Team (${G4})`, G5, 'Direct messages'];
    expect(await page.locator('main li').allTextContents()).toEqual(servers);
    expect(await page.locator('main b').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'servers');
    await page.locator('main a', { hasText: '<b>Ops</b>' }).click();
    expect(new URL(page.url()).search).toBe(`?workspace=${G1}`);
    const usage = await mainText();
    expect(usage).toContain('C-G1-ADMIN');
    expect(usage).toContain('C-G1-MEMBER');
    expect(usage).not.toContain('C-G2-SECRET');

    // Another server, by its id: only the choice of their own.
    await page.goto(`${origin}/web/usage?workspace=${G2}`);
    expect(await page.locator('main li').allTextContents()).toEqual(servers);
    expect(await mainText()).not.toContain('C-G2');
    const health = await page.goto(`${origin}/web/health?workspace=${G1}`);
    expect(health?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Health');
  });

  it("list an admin their own sign-ins only: Discord's name no server, so no one else's is theirs to see", async () => {
    await signedInToDiscordAs(MEMBER);
    await page.goto(`${origin}/web/usage`);
    await signInWithDiscord();
    await page.goto(`${origin}/web/sign-ins`);
    expect(await page.locator('main tbody td:first-child').allTextContents()).toEqual([MEMBER]);
    await signedInToDiscordAs(ADMIN);
    await page.goto(`${origin}/web/usage`);
    await signInWithDiscord();
    for (const address of ['/web/sign-ins', `/web/sign-ins?workspace=${G1}`]) {
      await page.goto(`${origin}${address}`);
      const people = await page.locator('main tbody td:first-child').allTextContents();
      expect(people.length, address).toBeGreaterThan(0);
      expect(new Set(people), address).toEqual(new Set([ADMIN]));
    }
  });

  it('show anyone else their own usage of their one server, and no health page', async () => {
    await signedInToDiscordAs(MEMBER);
    await page.goto(`${origin}/web/usage`);
    await signInWithDiscord();
    await page.locator('main a', { hasText: '<b>Ops</b>' }).click();
    const usage = await mainText();
    expect(usage).toContain('C-G1-MEMBER');
    expect(usage).not.toContain('C-G1-ADMIN');
    expect(usage).not.toContain('C-G2');
    expect((await page.goto(`${origin}/web/health?workspace=${G1}`))?.status()).toBe(404);
  });

  it("pages through Spool's servers past Discord's first 200 for a person's", async () => {
    // 250 servers more, between G5 and G_FAR by id: G_FAR is on the second page of 200.
    for (let i = 0; i < 250; i++)
      discord.guilds.push({ id: String(410000000000000000n + BigInt(i)) });
    discord.guilds.push({ id: G_FAR, name: 'Far away' });
    discord.memberRoles.set(`${G_FAR}/${FAR}`, []);
    const listed = () => discord.callsTo('GET', /^\/users\/@me\/guilds$/).length;
    const before = listed();
    await signedInToDiscordAs(FAR);
    await page.goto(`${origin}/web/usage`);
    await signInWithDiscord();
    expect(await page.locator('main li').allTextContents()).toEqual([
      'Far away',
      'Direct messages',
    ]);
    await page.getByRole('link', { name: 'Far away' }).click();
    expect(await mainText()).toContain('C-FAR-OWN');
    expect(listed() - before).toBe(2);
    // Kept a minute: another page asks Discord for none.
    await page.goto(`${origin}/web/schedules`);
    expect(listed() - before).toBe(2);
  });

  it("show a person their own direct messages' records and usage, and nobody else's, an admin included", async () => {
    await signedInToDiscordAs(MEMBER);
    await page.goto(`${origin}/web/results/${CALL_DM}`);
    await signInWithDiscord();
    expect(await mainText()).toContain('the whole listing of a DM');
    await page.goto(`${origin}/web/search?q=listing`);
    expect(await mainText()).toContain(`discord/dm/${DM_MEMBER}`);
    await page.goto(`${origin}/web/usage`);
    await page.getByRole('link', { name: 'Direct messages' }).click();
    expect(new URL(page.url()).search).toBe('?workspace=dm');
    let usage = await mainText();
    expect(usage).toContain('D-MEMBER-DM');
    expect(usage).not.toContain('D-ADMIN-DM');

    await signedInToDiscordAs(ADMIN);
    await page.goto(`${origin}/web/results/${CALL_DM}`);
    await signInWithDiscord();
    expect(await mainText()).not.toContain('listing of a DM');
    await page.goto(`${origin}/web/search?q=listing`);
    expect(await mainText()).not.toContain(DM_MEMBER);
    // An admin's direct messages are theirs as anyone's are: their own usage, nobody else's.
    await page.goto(`${origin}/web/usage?workspace=dm`);
    usage = await mainText();
    expect(usage).toContain('Your usage');
    expect(usage).toContain('D-ADMIN-DM');
    expect(usage).not.toContain('D-MEMBER-DM');
    await page.goto(`${origin}/web/usage?workspace=${G1}`);
    expect(await mainText()).not.toContain('-DM');
    // Health is a server's: direct messages are not among its choices.
    await page.goto(`${origin}/web/health?workspace=dm`);
    expect(await page.locator('main li').allTextContents()).not.toContain('Direct messages');
  });
});
