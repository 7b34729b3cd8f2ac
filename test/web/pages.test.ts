import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { openChromium, seriousViolations, shoot } from '../support/chromium.ts';
import { testDatabase } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { fileDatabaseUrl } from '../support/file-database.ts';
import { startSpool, type SpoolProcess } from '../support/process.ts';
import { hostileResults } from './hostile-results.ts';
import { hostile, REPLICAS, seedOperatorRows, signedIn, SLACK, LOCAL } from './operator-rows.ts';

/** Characters a page of a result shows (WEB_PAGE_CHARS). */
const PAGE_CHARS = 50_000;
const PLACE = { platform: 'console', workspace: 'local', channel: 'console', thread: 'web-test' };
const ASKER = 'UASKER';
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
/** The seeded schedules' ids (test/web/operator-rows.ts). */
let schedules: Awaited<ReturnType<typeof seedOperatorRows>>;
let canaryUrl: string;
let configDir: string;

/** The policy the operator pages read: prices, caps (one of another workspace), an admin. */
const POLICY = {
  rules: [],
  currency: 'USD',
  prices: { 'gpt-4o': { input: 2.5, output: 10 } },
  admins: ['U-BOSS'],
  caps: [
    { per: 'user', period: 'day', tokens: 100_000 },
    { per: 'workspace', period: 'month', spend: 50 },
    { per: 'channel', period: 'month', tokens: 5, match: { workspace: 'T9' } },
  ],
};

/** Stores one tool call and its whole result, as a turn does; returns its row id. */
async function storeRun(
  store: TranscriptStore,
  name: string,
  content: string,
  binaries = false,
  inboxId?: string,
) {
  const conversation = await store.openConversation(PLACE);
  const id = `call_${name}`;
  await store.appendMessages(conversation, [
    { role: 'user', content: `please run ${name}`, turn: 1, ...(inboxId ? { inboxId } : {}) },
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
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
  db = await testDatabase();
  const store = new TranscriptStore(db);
  // Asked by ASKER: the message its turn answered is an inbox row of theirs.
  const asked = await new DeliveryLedger(db).record(
    {
      lane: PLACE,
      messageKey: 'web-test-big',
      kind: 'message',
      user: ASKER,
      text: 'please run big',
      delivery: {},
    },
    false,
  );
  await storeRun(store, 'big', BIG, false, asked!.id);
  await storeRun(store, 'pictures', 'two pictures', true);
  for (const [name, content] of Object.entries(hostileResults(canaryUrl)))
    await storeRun(store, name, content);
  schedules = await seedOperatorRows(db, canaryUrl);
  configDir = await mkdtemp(join(tmpdir(), 'spool-web-'));
  await writeFile(join(configDir, 'policy.json'), JSON.stringify(POLICY));
  // A server of the 2026 era, and one that never starts.
  const modern = join(import.meta.dirname, '../fixtures/modern-mcp-server.mjs');
  await writeFile(
    join(configDir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        modern: { command: process.execPath, args: [modern, 'stdio'] },
        broken: { command: join(configDir, 'no-such-server') },
      },
    }),
  );
  fake = await new FakeOpenAi().start();
  spool = startSpool([], {
    env: {
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: 'sk-test',
      DATABASE_URL: fileDatabaseUrl(),
      POLICY_FILE: join(configDir, 'policy.json'),
      MCP_CONFIG: join(configDir, 'mcp.json'),
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
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

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
    // Before the match's link scrolls the header out of the picture.
    await shoot(page, 'result-found');
    await page.getByRole('link', { name: /^at \d+/ }).click();
    expect(await page.locator('mark#found').textContent()).toBe('line 39000 holds the NEEDLE here');
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
    // The hit names whose turn it was; the person and server filters keep it or leave it out.
    expect(await page.locator('.hits .meta').first().textContent()).toContain(`asked by ${ASKER}`);
    for (const [filters, found] of [
      [{ person: ASKER }, '1 found.'],
      [{ person: 'USOMEONEELSE' }, '0 found.'],
      [{ server: 'elsewhere' }, '0 found.'],
    ] as const) {
      await page.goto(`${base}/web/search?${new URLSearchParams({ q: 'needle', ...filters })}`);
      expect(await page.getByRole('status').textContent()).toBe(found);
    }
    await page.goto(`${base}/web/search?q=needle`);
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

describe('the operator pages, in Chromium', () => {
  let browser: Awaited<ReturnType<typeof openChromium>>;
  let page: Page;
  /** The console's person, the workspace's admin; and U2 of a Slack workspace, an admin of none. */
  let admin: { token: string; csrf: string };
  let u2: { token: string; csrf: string };
  beforeAll(async () => {
    browser = await openChromium();
    page = await browser.context.newPage();
    admin = await signedIn(db, { ...LOCAL, user: 'local' });
    u2 = await signedIn(db, { ...SLACK, user: 'U2' });
  }, 60_000);
  /** Each operator page's server time (`Server-Timing`), as an admin first opened it. */
  const serverMs: Record<string, number> = {};
  afterAll(async () => {
    await browser?.close();
    console.log(`Operator pages, server time: ${JSON.stringify(serverMs)} ms`);
  });
  const timed = (name: string, visited: Awaited<ReturnType<typeof visit>>) => {
    const header = visited.response?.headers()['server-timing'] ?? '';
    serverMs[name] = Number(/dur=([\d.]+)/.exec(header)?.[1]);
    return visited;
  };

  /** Opens `path` as the person of `session`, and no one else. */
  async function as(session: { token: string }, path: string) {
    await browser.context.clearCookies();
    await browser.context.addCookies([{ name: 'spool-session', value: session.token, url: base }]);
    return visit(page, path);
  }
  // As read on the screen: a cell's text apart from the next one's.
  const mainText = async () => (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  const tableText = async (name: string) =>
    (await page.getByRole('table', { name }).innerText()).replace(/\s+/g, ' ').trim();
  /** Nothing of a hostile name ran, loaded or became an element. */
  async function nothingRan(visited: { left: string[]; said: string[] }) {
    expect(visited.left).toEqual([]);
    expect(visited.said).toEqual([]);
    expect(await page.title()).not.toBe('pwned');
    expect(await page.locator('main img, main script, main iframe, [style], style').count()).toBe(
      0,
    );
    expect(canaryHits).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  }
  /** A hostile name as the page shows it: its markup as text, its override named. */
  const shown = (prefix: string) => `${prefix}${hostile(canaryUrl).replace('\u202E', 'U+202E')}`;
  const ELSEWHERE = [
    'C-OTHER-WORKSPACE',
    'gpt-other-workspace',
    'HOLD-OTHER-WORKSPACE',
    'SCHEDULE-OTHER-WORKSPACE',
    REPLICAS.other,
    'C-U3-SECRET',
    'C-U2-OWN',
    'standup of U2',
  ];

  it("shows an admin the workspace's usage by person, channel, model and day, its caps and holds", async () => {
    const visited = timed('usage', await as(admin, '/web/usage'));
    expect(visited.response?.status()).toBe(200);
    expect(await tableText('This month by person')).toMatch(
      /local 3,000 tokens.*U-COLLEAGUE 500 tokens/,
    );
    expect(await tableText('This month by channel')).toContain(shown('ops'));
    const models = await tableText('This month by model');
    expect(models).toContain(shown('model'));
    expect(models).toContain('gpt-4o 1,500 tokens');
    // Thirty days a bar; today's the tallest, all three rows of it.
    expect(await page.locator('svg.chart rect').count()).toBe(30);
    expect(await page.locator('svg.chart').getAttribute('aria-label')).toContain(
      'the most, 3,500,',
    );
    // The cap of another workspace is not listed; a person's cap names who spent most.
    const caps = await tableText('Spend caps');
    expect(caps).toContain('each user a day (UTC) 100,000 tokens everywhere 3,000 tokens (local)');
    expect(caps).not.toContain('T9');
    expect(await tableText('Held now')).toContain(`${shown('held')} local 4,096 tokens`);
    const text = await mainText();
    for (const elsewhere of ELSEWHERE) expect(text).not.toContain(elsewhere);
    await nothingRan(visited);
    // After the checks: a screenshot adds a style element of Playwright's own.
    await shoot(page, 'usage');
  });

  it("lists an admin the workspace's schedules, and Cancel cancels as `schedule cancel` does", async () => {
    const visited = timed('schedules', await as(admin, '/web/schedules'));
    const listed = await tableText('Schedules');
    expect(listed).toContain(
      `#${schedules.digest} local C-SCHEDULES 0 9 1 1 * (UTC) ${shown('digest ')} 2027-01-01 09:00:00 UTC 2026-01-01 09:00:00 UTC: answered`,
    );
    expect(listed).toContain(`paused one paused: Spool can no longer post (${shown('')})`);
    for (const elsewhere of ELSEWHERE) expect(listed).not.toContain(elsewhere);
    expect(listed).not.toContain('private digest of U3');
    await nothingRan(visited);
    await shoot(page, 'schedules');

    await page.getByRole('button', { name: `Cancel schedule #${schedules.digest}` }).click();
    await page.waitForURL(/\/web\/schedules\?cancelled=/);
    expect(await page.getByRole('status').textContent()).toBe(
      `Schedule #${schedules.digest} is cancelled: it will not run again.`,
    );
    expect(await tableText('Schedules')).not.toContain('digest');
    expect(
      await db.prisma.schedule.findUnique({ where: { id: BigInt(schedules.digest) } }),
    ).toBeNull();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('shows an admin the replicas and their leases, the inbox, and each MCP server', async () => {
    // The servers start beside the pages: the page is asked again until the modern one is up.
    await expect
      .poll(
        async () => {
          await as(admin, '/web/health');
          return tableText('MCP servers');
        },
        { timeout: 60_000 },
      )
      .toMatch(/modern ready 2026-07-28 \(\S+\) 4/);
    expect(await tableText('MCP servers')).toMatch(/broken (connecting|down)/);
    const replicas = await tableText('Replicas');
    expect(replicas).toContain('(this one) 0');
    expect(replicas).toContain(
      `${REPLICAS.local} 1 C-SCHEDULES / ${shown('thread')}, generation 7, until`,
    );
    const waiting = /1 message waiting in your workspace; the oldest came in ([\d,]+) s ago/.exec(
      await mainText(),
    );
    expect(Number(waiting?.[1]?.replace(',', ''))).toBeGreaterThanOrEqual(300);
    expect(await mainText()).not.toContain(REPLICAS.other);
    await nothingRan(timed('health', await as(admin, '/web/health')));
    await shoot(page, 'health');
  });

  it('shows anyone else their own usage and schedules, and no health page at all', async () => {
    const missing = await as(u2, '/web/no-such-page');
    const nothing = await mainText();
    const health = await as(u2, '/web/health');
    expect(health.response?.status()).toBe(missing.response?.status());
    expect(health.response?.status()).toBe(404);
    expect(await mainText()).toBe(nothing);
    expect(await page.getByRole('link', { name: 'Health' }).count()).toBe(0);

    const usage = await as(u2, '/web/usage');
    expect(await tableText('This month by channel')).toBe(
      'Channel Tokens Cost Requests with no price C-U2-OWN 700 tokens 0.01 USD 0',
    );
    expect(await page.getByRole('table', { name: 'This month by person' }).count()).toBe(0);
    expect(await mainText()).not.toContain('C-U3-SECRET');
    await nothingRan(usage);

    const listed = await as(u2, '/web/schedules');
    expect(await tableText('Schedules')).toContain('standup of U2');
    expect(await tableText('Schedules')).not.toContain('private digest of U3');
    await nothingRan(listed);
    // Another's schedule of the same workspace, by its id and this session's own token: refused.
    const forged = await page.request.post(`${base}/web/schedules/cancel`, {
      form: { csrf: u2.csrf, schedule: schedules.theirs },
    });
    expect(await forged.text()).toContain(`Schedule #${schedules.theirs} is another person’s`);
    expect(await db.prisma.schedule.count({ where: { id: BigInt(schedules.theirs) } })).toBe(1);

    // Their own, without the session's token: refused, and nothing cancelled.
    const tokenless = await page.request.post(`${base}/web/schedules/cancel`, {
      form: { csrf: 'guess', schedule: schedules.own },
    });
    expect(tokenless.status()).toBe(403);
    expect(await db.prisma.schedule.count({ where: { id: BigInt(schedules.own) } })).toBe(1);

    await page.goto(`${base}/web/schedules`);
    await page.getByRole('button', { name: `Cancel schedule #${schedules.own}` }).click();
    await page.waitForURL(/\/web\/schedules\?cancelled=/);
    expect(await page.getByRole('status').textContent()).toContain('is cancelled');
    expect(await page.locator('main').textContent()).toContain('No schedules.');
    expect(await db.prisma.schedule.count({ where: { id: BigInt(schedules.own) } })).toBe(0);
  });
});
