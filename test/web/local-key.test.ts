import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serveRoutes, type HttpEndpoint } from '../../src/observability.ts';
import type { Database } from '../../src/store/database.ts';
import { storeToolResult } from './operator-rows.ts';
import { openWebPages } from '../../src/web/open.ts';
import type { WebPages } from '../../src/web/pages.ts';
import { webRoutes } from '../../src/web/routes.ts';
import { openChromium, seriousViolations } from '../support/chromium.ts';
import { testDatabase, testSearch } from '../support/db.ts';
import { silentLogger } from '../support/logger.ts';
import { freePort } from '../support/process.ts';

/**
 * The console's local key, in Chromium: it signs in on to the page that was asked for (a result's
 * address with the key, or the sign-in page a result's address sent to), and never off Spool's
 * pages. Each test starts the pages again, so each has a key of its own.
 */
const CALL = 'call_local_key_result';
const RESULT = `/web/results/${CALL}`;

let db: Database;
let endpoint: HttpEndpoint;
let origin: string;
let pages: WebPages;
let browser: Awaited<ReturnType<typeof openChromium>>;
let page: Page;

const openPages = () =>
  openWebPages({ enabled: true, sessionMs: 3_600_000, pageChars: 50_000 }, db, {
    signIns: { console: 'local' },
    access: new Map(),
    admins: [],
    search: testSearch(db),
    logger: silentLogger,
    operators: {
      cancelSchedule: () => Promise.resolve(undefined),
      replica: 'web-local-key-test',
      notReady: () => Promise.resolve([]),
      mcpServers: () => [],
      now: () => new Date(),
    },
  })!;

/** The key of the address `npm start` would print now. */
const key = () => new URL(pages.localKey.address(origin)).searchParams.get('key')!;

const here = () => `${new URL(page.url()).pathname}${new URL(page.url()).search}`;

beforeAll(async () => {
  db = await testDatabase();
  await storeToolResult(
    db,
    { platform: 'console', workspace: 'local', channel: 'console', thread: 'key' },
    CALL,
    'the whole local listing',
  );
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
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
  await db?.close();
});

beforeEach(async () => {
  pages = openPages();
  await browser.context.clearCookies();
});

const mainText = async () => (await page.locator('main').innerText()).replace(/\s+/g, ' ');

describe('the local key, in Chromium', () => {
  it("signs in on to a result's address opened with it, the key gone from the address", async () => {
    const printed = key();
    await page.goto(`${origin}${RESULT}?view=text&key=${printed}`);
    expect(here()).toBe(`${RESULT}?view=text`);
    expect(await mainText()).toContain('the whole local listing');
    // Spent: the same address again, signed out, shows the sign-in page and nothing of the result.
    await browser.context.clearCookies();
    const again = await page.goto(`${origin}${RESULT}?key=${printed}`);
    expect(again?.status()).toBe(403);
    expect(await mainText()).toContain('That key was used already');
    expect(await page.content()).not.toContain('whole local listing');
  });

  it('signs in from the sign-in page a result sent to, back to the result', async () => {
    await page.goto(`${origin}${RESULT}`);
    expect(here()).toBe(`/web/sign-in?${new URLSearchParams({ to: RESULT })}`);
    expect(await page.content()).not.toContain('whole local listing');
    expect(await seriousViolations(page)).toEqual([]);
    // The whole printed address, as someone would paste it.
    const printed = pages.localKey.address(origin);
    await page.getByLabel('The address npm start printed, or its key').fill(printed);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/web/local'));
    expect(here()).toBe(RESULT);
    expect(await mainText()).toContain('the whole local listing');

    await browser.context.clearCookies();
    await page.goto(`${origin}${RESULT}`);
    await page.getByLabel('The address npm start printed, or its key').fill(printed);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/web/local');
    expect(await mainText()).toContain('That key was used already');
  });

  it('lands on the home page from a return address off Spool, plain or encoded', async () => {
    for (const hostile of [
      '//evil.example/web/x',
      'https://evil.example/web/x',
      '/\\evil.example',
      '/web/%2F%2Fevil.example',
      '/web/%5Cevil.example',
      '/web/sign-out',
    ]) {
      pages = openPages();
      await browser.context.clearCookies();
      await page.goto(`${origin}/web/local?${new URLSearchParams({ key: key(), to: hostile })}`);
      expect(page.url(), hostile).toBe(`${origin}/web/`);
    }
  });
});
