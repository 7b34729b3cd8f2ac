import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Html } from './html.ts';

/**
 * What every page is sent with. No script runs on any page (there is none: `default-src 'none'`),
 * styles come only from Spool's own sheet, images only from Spool, forms post only to Spool, and no
 * page can be framed. A page's address is sent to no other site (`same-origin`).
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Same-origin requests carry their Origin (a form's is checked); nothing else learns the address.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/**
 * What a tool result's bytes are sent with, as an image or a download: as their own document they
 * run nothing and load nothing (`sandbox`), and a browser never guesses them to be a page.
 */
export const CONTENT_HEADERS: Readonly<Record<string, string>> = {
  ...PAGE_HEADERS,
  'content-security-policy': "default-src 'none'; sandbox",
};

/** When each response's request came in, for its Server-Timing header. */
const started = new WeakMap<ServerResponse, number>();

/** Starts the clock a page's Server-Timing header reads. */
export const startClock = (res: ServerResponse): void => void started.set(res, performance.now());

const timing = (res: ServerResponse): Record<string, string> => {
  const since = started.get(res);
  return since === undefined
    ? {}
    : { 'server-timing': `page;dur=${(performance.now() - since).toFixed(1)}` };
};

export function sendPage(
  res: ServerResponse,
  status: number,
  page: Html,
  headers: Record<string, string | string[]> = {},
): void {
  res
    .writeHead(status, {
      ...PAGE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      ...timing(res),
      ...headers,
    })
    .end(page.text);
}

/** A redirect to one of Spool's own pages (a path, never an address taken from a request). */
export function redirect(
  res: ServerResponse,
  path: string,
  headers: Record<string, string | string[]> = {},
): void {
  if (!path.startsWith('/') || path.startsWith('//')) throw new Error(`not a local path: ${path}`);
  res.writeHead(303, { ...PAGE_HEADERS, location: path, ...headers }).end();
}

/** The request's cookies, by name (the first of a name wins). */
export function cookiesOf(req: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, pair.slice(eq + 1).trim());
  }
  return cookies;
}

/** A form's fields; a body over `maxBytes` is refused (the promise rejects). */
export function readForm(req: IncomingMessage, maxBytes = 16_384): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (part: Buffer) => {
      size += part.length;
      if (size > maxBytes) {
        reject(new Error('form too large'));
        req.destroy();
      } else parts.push(part);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(parts).toString('utf8'))));
    req.on('error', reject);
  });
}
