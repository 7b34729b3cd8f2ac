import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/logger.ts';
import { errorMessage } from '../core/errors.ts';
import type { ChannelAccess } from '../core/ports/platform/channel-access.ts';
import type { PlatformSignIn } from '../core/ports/platform/platform-sign-in.ts';
import type { StoredPart, RecordsPort } from '../core/ports/web/records.ts';
import type { Person } from '../core/ports/parked/sign-ins.ts';
import type { WebSessionPort } from '../core/ports/web/web-sessions.ts';
import { Access } from './sign-in/access.ts';
import { html } from './html.ts';
import { CONTENT_HEADERS, cookiesOf, readForm, redirect, sendPage, startClock } from './http.ts';
import { layout, type Viewer } from './layout.ts';
import { ResultCache } from './records/result-cache.ts';
import { isShownImage, resultBody, resultQueryOf } from './records/result-page.ts';
import { returnPath } from './sign-in/return-to.ts';
import { sameSecret, Sessions } from './sign-in/sessions.ts';
import { WEB_PATH, type WebSettings } from './settings.ts';
import { LOCAL_PERSON, LocalKey, PlatformSignInDesk, signInBody } from './sign-in/sign-in.ts';
import { STYLE_SHEET } from './style.ts';

export interface WebPagesDeps {
  settings: WebSettings;
  sessions: WebSessionPort;
  records: RecordsPort;
  /** Each platform's own sign-in; 'local' for the console. */
  signIns: Record<string, PlatformSignIn | 'local'>;
  /** Each running platform's word on who may read a channel, by platform name (filled as they start). */
  access: ReadonlyMap<string, ChannelAccess>;
  /** The policy's admins: they see their workspace. */
  admins: readonly string[];
  logger: Logger;
}

/** A request as a handler sees it. */
export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The path's parts after /web/. */
  parts: string[];
}

type Handler = (r: Request, viewer: Viewer) => Promise<void>;

/** The pages' icon: a 16×16 PNG, one blue square (else the browser asks for /favicon.ico). */
const FAVICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGPgjllLEmIY1TCqYfhqAAAZyhQQSPgVNgAAAABJRU5ErkJggg==',
  'base64',
);

/** What every page loads: the style sheet and the icon, the same for everyone. */
const ASSETS: Partial<Record<string, { type: string; body: string | Buffer; maxAge: number }>> = {
  'style.css': { type: 'text/css; charset=utf-8', body: STYLE_SHEET, maxAge: 3_600 },
  'favicon.png': { type: 'image/png', body: FAVICON, maxAge: 86_400 },
};

/** The sign-in page, returning to the page `asked` (when it is one to return to) once signed in. */
function signInPath(asked: URL | undefined): string {
  const to = asked && returnPath(`${asked.pathname}${asked.search}`);
  return `${WEB_PATH}/sign-in${to ? `?${new URLSearchParams({ to })}` : ''}`;
}

const NOT_FOUND = 'There is no such page, or it is not yours to see.';

/**
 * Spool's web pages (docs/web-pages.md): signing in and out, and, for a signed-in person, what
 * they may see of the records. Every page is rendered here on the server; none runs a script.
 */
export class WebPages {
  readonly sessions: Sessions;
  readonly access: Access;
  readonly localKey = new LocalKey();
  private readonly desk: PlatformSignInDesk;
  private readonly results = new ResultCache();
  private readonly pages = new Map<string, Handler>();

  constructor(readonly deps: WebPagesDeps) {
    const secure = deps.settings.publicUrl?.startsWith('https:') ?? false;
    this.sessions = new Sessions(deps.sessions, { secure, sessionMs: deps.settings.sessionMs });
    this.access = new Access(deps.access);
    const base = deps.settings.publicUrl;
    this.desk = new PlatformSignInDesk(
      deps.signIns,
      base ? `${base}${WEB_PATH}/sign-in/callback` : undefined,
      secure,
    );
    this.page('', (r, v) => this.home(r, v));
    this.page('results', (r, v) => this.result(r, v));
  }

  /** A page for signed-in people, at /web/NAME/…. */
  page(name: string, handler: Handler): void {
    this.pages.set(name, handler);
  }

  /** Answers a request under /web. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    startClock(res);
    const url = new URL(req.url ?? '/', 'http://spool');
    const parts = url.pathname.slice(WEB_PATH.length + 1).split('/');
    const r: Request = { req, res, url, parts };
    try {
      if (req.method === 'GET' && (await this.open(r))) return;
      const session = await this.sessions.of(req);
      // Nothing of any record without a session: a forwarded address shows the sign-in page, which
      // returns to it once signed in.
      if (!session) return redirect(res, signInPath(req.method === 'GET' ? url : undefined));
      const viewer = this.viewerOf(session.person, session.csrf, session.id);
      if (req.method === 'POST') return await this.change(r, viewer);
      const handler = req.method === 'GET' ? this.pages.get(parts[0] ?? '') : undefined;
      if (!handler) return this.notFound(r, viewer);
      await handler(r, viewer);
    } catch (error) {
      this.deps.logger.warn('A web page failed', {
        path: url.pathname,
        error: errorMessage(error),
      });
      if (!res.headersSent)
        sendPage(
          res,
          500,
          layout('Something went wrong', html`<p>This page could not be shown.</p>`),
        );
    }
  }

  notFound(r: Request, viewer?: Viewer): void {
    sendPage(r.res, 404, layout('Not found', html`<p>${NOT_FOUND}</p>`, viewer));
  }

  private viewerOf(person: Person, csrf: string, session: string): Viewer {
    // The console's one person is its operator.
    const admin = person.platform === 'console' || this.deps.admins.includes(person.user);
    return { ...person, admin, csrf, session };
  }

  /** The pages anyone may open: the style sheet and signing in. True when it was one. */
  private async open(r: Request): Promise<boolean> {
    const [first, second] = r.parts;
    const asset = first === undefined ? undefined : ASSETS[first];
    if (asset) {
      const { type, body, maxAge } = asset;
      r.res.writeHead(200, {
        ...CONTENT_HEADERS,
        'content-type': type,
        'cache-control': `max-age=${maxAge}`,
      });
      r.res.end(body);
      return true;
    }
    if (first === 'local' || r.url.searchParams.has('key')) {
      await this.localSignIn(r);
      return true;
    }
    if (first !== 'sign-in') return false;
    if (second === 'callback') await this.signedIn(r);
    else if (second) this.toPlatform(r, second);
    else {
      const to = returnPath(r.url.searchParams.get('to'));
      sendPage(r.res, 200, layout('Sign in', signInBody(this.desk.names, undefined, to)));
    }
    return true;
  }

  /**
   * The local key, in the address `npm start` printed (/web/local?key=…, with `to` from the
   * sign-in page's form) or on any page's (/web/results/ID?key=…): signs the console's one person
   * in, on to that page (`returnPath`; else the home page).
   */
  private async localSignIn(r: Request): Promise<void> {
    const query = new URLSearchParams(r.url.searchParams);
    const given = query.get('key');
    query.delete('key');
    const rest = query.size > 0 ? `?${query}` : '';
    const to = returnPath(r.parts[0] === 'local' ? query.get('to') : `${r.url.pathname}${rest}`);
    // The form takes the key or the whole address it is in.
    const key = (given && /[?&]key=([\w-]+)/.exec(given)?.[1]) || given;
    if (!this.localKey.take(key)) {
      const note = 'That key was used already, or is not the one Spool printed.';
      sendPage(r.res, 403, layout('Sign in', signInBody(this.desk.names, note, to)));
      return;
    }
    redirect(r.res, to ?? `${WEB_PATH}/`, {
      'set-cookie': await this.sessions.start(LOCAL_PERSON),
    });
  }

  private toPlatform(r: Request, name: string): void {
    const begun = this.desk.begin(name, returnPath(r.url.searchParams.get('to')));
    if (!begun) return this.notFound(r);
    r.res
      .writeHead(302, {
        location: begun.location,
        'set-cookie': begun.cookie,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      })
      .end();
  }

  private async signedIn(r: Request): Promise<void> {
    const state = cookiesOf(r.req).get(this.desk.stateCookieName);
    const done = await this.desk.complete(r.url.searchParams, state).catch((error: unknown) => {
      this.deps.logger.warn('Could not check who signed in to the web pages', {
        error: errorMessage(error),
      });
      return undefined;
    });
    if (!done) {
      sendPage(
        r.res,
        403,
        layout(
          'Sign in',
          signInBody(
            this.desk.names,
            'That sign-in did not start in this browser, or the platform did not take it. Nobody was signed in.',
          ),
        ),
        { 'set-cookie': this.desk.clearedState },
      );
      return;
    }
    redirect(r.res, done.to ?? `${WEB_PATH}/`, {
      'set-cookie': [await this.sessions.start(done.person), this.desk.clearedState],
    });
  }

  /** A form: taken only with the session's own token, from a page of this server. */
  private async change(r: Request, viewer: Viewer): Promise<void> {
    const form = await readForm(r.req);
    const origin = r.req.headers.origin;
    // Browsers send the Origin of a form's post; one of another site (or 'null') is refused.
    const sameOrigin =
      origin === undefined ||
      origin === `http://${r.req.headers.host}` ||
      origin === this.deps.settings.publicUrl?.replace(/(https?:\/\/[^/]+).*/, '$1');
    if (!sameOrigin || !sameSecret(form.get('csrf') ?? '', viewer.csrf)) {
      sendPage(
        r.res,
        403,
        layout(
          'Refused',
          html`<p>That form did not come from this page. Nothing was changed.</p>`,
          viewer,
        ),
      );
      return;
    }
    const action = this.actions.get(r.parts.join('/'));
    if (!action) return this.notFound(r, viewer);
    await action(r, viewer, form);
  }

  private readonly actions = new Map<
    string,
    (r: Request, v: Viewer, form: URLSearchParams) => Promise<void>
  >([
    [
      'sign-out',
      async (r, v) => {
        await this.sessions.end(v.session, v);
        redirect(r.res, `${WEB_PATH}/sign-in`, { 'set-cookie': this.sessions.cleared });
      },
    ],
  ]);

  /** A form action for signed-in people, at POST /web/PATH. */
  action(path: string, run: (r: Request, v: Viewer, form: URLSearchParams) => Promise<void>): void {
    this.actions.set(path, run);
  }

  private async home(r: Request, viewer: Viewer): Promise<void> {
    if (r.parts.length > 1) return this.notFound(r, viewer);
    const body = html`<p>
        Signed in as ${viewer.user} (${viewer.platform}${viewer.admin ? ', admin' : ''}).
      </p>
      <ul>
        <li><a href="${WEB_PATH}/search">Search tool runs and messages</a></li>
        <li><a href="${WEB_PATH}/usage">Usage and cost</a></li>
        <li><a href="${WEB_PATH}/schedules">Schedules</a></li>
        ${viewer.admin ? html`<li><a href="${WEB_PATH}/health">Health</a></li>` : ''}
        <li><a href="${WEB_PATH}/sign-ins">Sign-ins to these pages</a></li>
      </ul>`;
    sendPage(r.res, 200, layout('Spool', body, viewer));
  }

  /** /web/results/ID, and /web/results/ID/parts/N (a binary part's bytes). */
  private async result(r: Request, viewer: Viewer): Promise<void> {
    const [, id = '', sub, position] = r.parts;
    const read = await this.results.get(id, (key) => this.deps.records.call(key));
    if (!read || !(await this.access.mayRead(viewer, read.call.place)))
      return this.notFound(r, viewer);
    if (sub === 'parts')
      return this.part(r, viewer, read.call.id, Number(position), read.call.result?.binaries ?? []);
    if (sub !== undefined) return this.notFound(r, viewer);
    const body = resultBody(
      read.call,
      read.shape,
      resultQueryOf(r.url.searchParams),
      this.deps.settings.pageChars,
    );
    sendPage(r.res, 200, layout(`Result of ${read.call.toolName}`, body, viewer));
  }

  private async part(
    r: Request,
    viewer: Viewer,
    callId: string,
    position: number,
    parts: StoredPart[],
  ): Promise<void> {
    const part = parts.find((p) => p.position === position);
    const bytes = part && (await this.deps.records.binary(callId, position));
    if (!part || !bytes) return this.notFound(r, viewer);
    const image = isShownImage(part);
    r.res.writeHead(200, {
      ...CONTENT_HEADERS,
      // Only a raster image is sent as what it is; anything else is bytes to save.
      'content-type': image ? part.mimeType! : 'application/octet-stream',
      'content-disposition': image
        ? 'inline'
        : `attachment; filename="result-${callId}-part-${position + 1}.bin"`,
    });
    r.res.end(bytes);
  }
}
