import { randomBytes } from 'node:crypto';
import type { PlatformSignIn } from '../../core/ports/platform/platform-sign-in.ts';
import type { Person } from '../../core/ports/parked/sign-ins.ts';
import { html, type Html } from '../html.ts';
import { sameSecret } from './sessions.ts';
import { WEB_PATH } from '../settings.ts';
import { returnPath } from './return-to.ts';

/** The console's one person: whoever holds the key `npm start` printed, at this machine. */
export const LOCAL_PERSON: Person = { platform: 'console', workspace: 'local', user: 'local' };

/**
 * The key in the local address `npm start` prints where no platform runs: it signs in the
 * console's one person once, then is spent.
 */
export class LocalKey {
  private key: string | undefined = randomBytes(24).toString('base64url');

  /** The address that signs in with it, on `base` (the pages' address). */
  address(base: string): string {
    return `${base}${WEB_PATH}/local?key=${this.key ?? ''}`;
  }

  /** Whether `key` is it, unspent; it is spent by this. */
  take(key: string | null): boolean {
    if (!this.key || !key || !sameSecret(key, this.key)) return false;
    this.key = undefined;
    return true;
  }
}

/** The state cookie of a sign-in under way: what the platform's redirect must bring back. */
const STATE_COOKIE = 'spool-sign-in';

/**
 * Signing in to the pages with a chat platform's own sign-in (Sign in with Slack, Discord's OAuth2
 * `identify`), as the sign-in links do: the browser is sent to the platform with a random state
 * also set in a cookie, and the redirect is taken only with both.
 */
export class PlatformSignInDesk {
  constructor(
    private readonly platforms: Record<string, PlatformSignIn | 'local'>,
    /** PUBLIC_URL + /web/sign-in/callback; none without PUBLIC_URL. */
    private readonly redirectUrl: string | undefined,
    private readonly secure: boolean,
  ) {}

  /** The platforms a person can sign in with here. */
  get names(): string[] {
    if (!this.redirectUrl) return [];
    return Object.keys(this.platforms).filter((name) => this.platforms[name] !== 'local');
  }

  /**
   * Where to send the browser, and the state cookie to set; none for a platform not here. The state
   * carries the page to return to (`to`, checked by `returnPath`), as the cookie it must match does.
   */
  begin(name: string, to?: string): { location: string; cookie: string } | undefined {
    const platform = this.platforms[name];
    if (!platform || platform === 'local' || !this.redirectUrl) return undefined;
    const returned = to ? `.${Buffer.from(to).toString('base64url')}` : '';
    const state = `${name}.${randomBytes(24).toString('base64url')}${returned}`;
    return {
      location: platform.authorizationUrl({ state, redirectUrl: this.redirectUrl }),
      cookie: this.stateCookie(state, 600),
    };
  }

  /**
   * The person the platform names, and the page their sign-in began from, when the redirect brings
   * back this browser's state and a code; undefined when it does not (a forwarded or replayed
   * redirect).
   */
  async complete(
    query: URLSearchParams,
    cookieState: string | undefined,
  ): Promise<{ person: Person; to?: string } | undefined> {
    const state = query.get('state') ?? '';
    const code = query.get('code');
    if (!code || !cookieState || !this.redirectUrl || !sameSecret(state, cookieState))
      return undefined;
    const [name = '', , returned] = state.split('.');
    const platform = this.platforms[name];
    if (!platform || platform === 'local') return undefined;
    const person = await platform.identify(code, this.redirectUrl);
    const to = returnPath(returned && Buffer.from(returned, 'base64url').toString());
    return { person, ...(to ? { to } : {}) };
  }

  get stateCookieName(): string {
    return STATE_COOKIE;
  }

  /** The cookie that ends a sign-in under way. */
  get clearedState(): string {
    return this.stateCookie('', 0);
  }

  private stateCookie(value: string, maxAge: number): string {
    return `${STATE_COOKIE}=${value}; Path=${WEB_PATH}/sign-in; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${this.secure ? '; Secure' : ''}`;
  }
}

const LABELS: Record<string, string> = {
  slack: 'Sign in with Slack',
  discord: 'Sign in with Discord',
};

/**
 * The sign-in page: a link per platform, each returning to `to` once signed in; on the console,
 * a form for the local key that returns there too.
 */
export function signInBody(platforms: string[], note?: string, to?: string): Html {
  const query = to ? `?${new URLSearchParams({ to })}` : '';
  return html`${note ? html`<p role="alert">${note}</p>` : ''}
  ${
    platforms.length > 0
      ? html`<ul>
          ${platforms.map((p) => html`<li><a href="${WEB_PATH}/sign-in/${p}${query}">${LABELS[p] ?? p}</a></li>`)}
        </ul>`
      : html`<form class="find" method="get" action="${WEB_PATH}/local">
            <label
              ><span>The address <code>npm start</code> printed, or its key</span>
              <input id="key" name="key" type="password" autocomplete="off" required />
            </label>
            ${to ? html`<input type="hidden" name="to" value="${to}" />` : ''}
            <button type="submit">Sign in</button>
          </form>
          <p>Each key signs in once; start Spool again for another.</p>`
  }`;
}
