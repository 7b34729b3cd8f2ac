import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package (`.ci/run` installs it); Playwright's own builds cannot be fetched here. */
export const CHROMIUM = process.env.SPOOL_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A real browser with a fresh profile of its own; `close` removes the profile too. */
export async function openChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'spool-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1100, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = (): string =>
  (createRequire(import.meta.url)('axe-core') as { source: string }).source;

/**
 * axe-core's serious and critical violations on the page, by rule and the elements they are on. axe
 * is evaluated over the DevTools protocol, which the page's CSP does not govern: the page itself
 * runs no script.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource());
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A screenshot of the page for docs/web-pages.md, when SPOOL_SCREENSHOTS names their folder. */
export async function shoot(page: Page, name: string): Promise<void> {
  const folder = process.env.SPOOL_SCREENSHOTS;
  if (folder) await page.screenshot({ path: `${folder}/${name}.png` });
}
