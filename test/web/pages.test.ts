import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { openChromium, seriousViolations } from '../support/chromium.ts';
import { testDatabase } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { fileDatabaseUrl } from '../support/file-database.ts';
import { startSpool, type SpoolProcess } from '../support/process.ts';
import { hostileResults } from './hostile-results.ts';

/** Characters a page of a result shows (WEB_PAGE_CHARS). */
const PAGE_CHARS = 50_000;
const PLACE = { platform: 'console', workspace: 'local', channel: 'console', thread: 'web-test' };
/** 2 MB of lines, the word NEEDLE on one of them near the end. */
const BIG = Array.from({ length: 40_000 }, (_, i) =>
  i === 39_000
    ? 'line 39000 holds the NEEDLE here'
    : `line ${i} of a large listing, padded to fifty ch`,
).join('\n');
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let db: Database;
let fake: FakeOpenAi;
let spool: SpoolProcess;
let canary: Server;
let canaryHits: string[];
let base: string;
let localAddress: string;
/** Each stored call's row id, by the name it was stored under. */
const ids: Record<string, string> = {};

/** Stores one tool call and its whole result, as a turn does; returns its row id. */
async function storeRun(store: TranscriptStore, name: string, content: string, binaries = false) {
  const conversation = await store.openConversation(PLACE);
  const id = `call_${name}`;
  await store.appendMessages(conversation, [
    { role: 'user', content: `please run ${name}`, turn: 1 },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id, name, arguments: `{"name":"${name}"}` }],
      turn: 1,
    },
  ]);
  await store.appendMessages(
    conversation,
    [{ role: 'tool', toolCallId: id, content: content.slice(0, 100), turn: 1 }],
    {
      results: [
        {
          toolCallId: id,
          content,
          isError: false,
          durationMs: 7,
          ...(binaries
            ? {
                binaries: [
                  {
                    kind: 'image',
                    mimeType: 'image/png',
                    sizeBytes: PNG.length,
                    base64: PNG.toString('base64'),
                  },
                  {
                    kind: 'image',
                    mimeType: 'image/svg+xml',
                    sizeBytes: 60,
                    base64: Buffer.from(`<svg onload="fetch('/svg')"></svg>`).toString('base64'),
                  },
                ],
              }
            : {}),
        },
      ],
    },
  );
  const [row] = await db.prisma.$queryRaw<Array<{ id: bigint }>>`
    SELECT c.id FROM tool_calls c JOIN conversations v ON v.id = c.conversation_id
     WHERE v.thread = ${PLACE.thread} AND c.tool_call_id = ${id}`;
  ids[name] = String(row!.id);
}

beforeAll(async () => {
  canaryHits = [];
  canary = createServer((req, res) => {
    canaryHits.push(req.url ?? '');
    res.end();
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  const canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
  db = await testDatabase();
  const store = new TranscriptStore(db);
  await storeRun(store, 'big', BIG);
  await storeRun(store, 'pictures', 'two pictures', true);
  for (const [name, content] of Object.entries(hostileResults(canaryUrl)))
    await storeRun(store, name, content);
  fake = await new FakeOpenAi().start();
  spool = startSpool([], {
    env: {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: 'sk-test',
      DATABASE_URL: fileDatabaseUrl(),
    },
    timeoutMs: 300_000,
  });
  localAddress = await new Promise<string>((resolve, reject) => {
    let seen = '';
    spool.child.stderr.on('data', (d: Buffer) => {
      seen += d.toString();
      const found = /Web pages: (\S+)/.exec(seen);
      if (found) resolve(found[1]!);
    });
    void spool.done.then((r) => reject(new Error(`Spool exited: ${r.stderr}`)));
  });
  base = new URL(localAddress).origin;
}, 120_000);

afterAll(async () => {
  spool?.child.stdin.end();
  await spool?.done;
  await fake?.stop();
  await db?.close();
  canary?.close();
});

/** A screenshot of the page for docs/web-pages.md, when SPOOL_SCREENSHOTS names their folder. */
async function shoot(page: Page, name: string): Promise<void> {
  const folder = process.env.SPOOL_SCREENSHOTS;
  if (folder) await page.screenshot({ path: `${folder}/${name}.png` });
}

/** Opens `path`, and returns the page's own requests that left Spool, and its console. */
async function visit(page: Page, path: string) {
  const left: string[] = [];
  const said: string[] = [];
  page.on('request', (r) => void (new URL(r.url()).origin !== base && left.push(r.url())));
  page.on('console', (m) => said.push(m.text()));
  page.on('pageerror', (e) => said.push(e.message));
  const response = await page.goto(`${base}${path}`);
  return { response, left, said };
}

describe('the web pages, in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openChromium>>;
  let page: Page;
  beforeAll(async () => {
    browser = await openChromium();
    page = await browser.context.newPage();
  }, 60_000);
  afterAll(() => browser?.close());

  it('show a forwarded address nothing without a session; the local key signs in once', async () => {
    const forwarded = await visit(page, `/web/results/${ids.big}`);
    expect(new URL(page.url()).pathname).toBe('/web/sign-in');
    expect(forwarded.response?.status()).toBe(200);
    await shoot(page, 'sign-in');
    expect(await page.content()).not.toContain('large listing');
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto(localAddress);
    expect(new URL(page.url()).pathname).toBe('/web/');
    await shoot(page, 'home');
    const [cookie] = await browser.context.cookies();
    expect(cookie).toMatchObject({ name: 'spool-session', httpOnly: true, sameSite: 'Lax' });
    expect(await seriousViolations(page)).toEqual([]);
    const again = await fetch(localAddress, { redirect: 'manual' });
    expect(again.status).toBe(403);
  });

  it('shows images, and offers any other binary part as a download', async () => {
    await visit(page, `/web/results/${ids.pictures}`);
    await shoot(page, 'result-images');
    expect(await page.getByRole('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(
      1,
    );
    const href = await page.getByRole('link', { name: 'Download part 2' }).getAttribute('href');
    const svg = await page.request.get(`${base}${href}`);
    expect(svg.headers()).toMatchObject({
      'content-type': 'application/octet-stream',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    expect(svg.headers()['content-disposition']).toMatch(/^attachment/);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('pages a 2 MB result and finds in it with the grep the model uses', async () => {
    const first = await page.goto(`${base}/web/results/${ids.big}`);
    // From the request to the page loaded, as the browser's own navigation timing says.
    const firstMs = Math.round(
      await page.evaluate(() => performance.getEntriesByType('navigation')[0]!.duration),
    );
    const firstServerMs = Number(/dur=([\d.]+)/.exec(first?.headers()['server-timing'] ?? '')?.[1]);
    // The goal, 1 s in the browser, is measured on a quiet machine (docs/web-pages.md); here, on
    // two cores other suites load, the first page (the result read cold) is held to a bound.
    expect(firstMs).toBeLessThan(5_000);
    expect(first?.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.getByLabel(/^The result, characters/).textContent()).toContain(
      'line 0 of a large listing',
    );
    await page.getByRole('link', { name: 'Next' }).first().click();
    expect(await page.getByLabel(/^The result, characters/).textContent()).toContain(
      'line 2040 of',
    );
    const next = await page.goto(`${base}/web/results/${ids.big}?page=3`);
    const nextMs = Number(/dur=([\d.]+)/.exec(next?.headers()['server-timing'] ?? '')?.[1]);
    expect(nextMs).toBeLessThan(200);

    await page.getByRole('searchbox').fill('needle');
    const found = page.waitForNavigation();
    await page.getByRole('button', { name: 'Find' }).click();
    const findResponse = await found;
    const findMs = Number(/dur=([\d.]+)/.exec(findResponse?.headers()['server-timing'] ?? '')?.[1]);
    expect(findMs).toBeLessThan(200);
    expect((await page.getByRole('status').textContent())?.replace(/\s+/g, ' ')).toContain(
      '1 matching lines',
    );
    await page.getByRole('link', { name: /^at \d+/ }).click();
    expect(await page.locator('mark#found').textContent()).toBe('line 39000 holds the NEEDLE here');
    await shoot(page, 'result-found');
    expect(await seriousViolations(page)).toEqual([]);
    console.log(
      `2 MB result: first page ${firstMs} ms in the browser (${firstServerMs} ms server); next page ${nextMs} ms, find ${findMs} ms server time`,
    );
  });

  it('runs nothing, styles nothing and sends nothing from hostile results', async () => {
    const views = Object.keys(hostileResults('http://x')).flatMap((name) => [
      `/web/results/${ids[name]}`,
      `/web/results/${ids[name]}?view=text${name === 'oneLiner' ? `&page=${5_000_000 / PAGE_CHARS}` : ''}`,
    ]);
    for (const path of views) {
      const { response, left, said } = await visit(page, path);
      expect(response?.status(), path).toBe(200);
      expect(new URL(page.url()).pathname, path).toMatch(/^\/web\/results\//);
      // Nothing left Spool, nothing ran, and what the result held is text, unstyled.
      expect(left, path).toEqual([]);
      expect(said, path).toEqual([]);
      expect(await page.title(), path).not.toBe('pwned');
      const planted = await page.evaluate(() =>
        [...document.querySelectorAll('main pre *, main table *, main .json *')]
          .map((e) => e.tagName.toLowerCase())
          .filter(
            (t) =>
              ![
                'span',
                'mark',
                'details',
                'summary',
                'ul',
                'li',
                'thead',
                'tbody',
                'tr',
                'th',
                'td',
              ].includes(t),
          ),
      );
      expect(planted, path).toEqual([]);
      expect(
        await page.evaluate(() => document.querySelectorAll('[style], style, script').length),
        path,
      ).toBe(0);
      expect(await page.evaluate(() => getComputedStyle(document.body).display), path).toBe(
        'block',
      );
      expect(await seriousViolations(page), path).toEqual([]);
    }
    const oneLiner = await page.getByLabel(/^The result, characters/).textContent();
    expect(oneLiner?.slice(0, 30)).toBe("<script>fetch('http://127.0.0.");
    expect(canaryHits).toEqual([]);
  });

  it('searches what the viewer may read, and shows a conversation as it happened', async () => {
    await page.goto(`${base}/web/search`);
    await page.getByLabel('Words').fill('needle');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/web\/search\?q=needle/);
    expect(await page.getByRole('status').textContent()).toBe('1 found.');
    await shoot(page, 'search');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'tool result of big' }).click();
    expect(await page.locator('mark#found').textContent()).toContain('NEEDLE');

    await page.getByRole('link', { name: 'the conversation' }).click();
    await page.waitForURL(/\/web\/conversations\//);
    const timeline = await page.locator('main ol').textContent();
    expect(timeline).toContain('please run big');
    await shoot(page, 'conversation');
    expect(timeline).toContain('ok in 7 ms, 1988872 characters');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("lists the viewer's sign-ins, and shows JSON folded and CSV as a table", async () => {
    await page.goto(`${base}/web/sign-ins`);
    expect(await page.locator('main tbody').textContent()).toContain('this browser');
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'sign-ins');
    await page.goto(`${base}/web/results/${ids.json}`);
    expect(await page.locator('main .json summary').first().textContent()).toBe('{2 keys}');
    await shoot(page, 'result-json');
    await page.goto(`${base}/web/results/${ids.csv}`);
    expect(await page.locator('main thead th').allTextContents()).toEqual(['name', 'payload']);
    expect(await page.locator('main tbody tr').count()).toBe(2);
    await shoot(page, 'result-csv');
  });

  it('takes no form without the session token, and signs out', async () => {
    const forged = await page.request.post(`${base}/web/sign-out`, { form: { csrf: 'guess' } });
    expect(forged.status()).toBe(403);
    await page.goto(`${base}/web/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/web/sign-in`);
    await page.goto(`${base}/web/results/${ids.big}`);
    expect(new URL(page.url()).pathname).toBe('/web/sign-in');
    expect(await page.content()).not.toContain('large listing');
  });
});
