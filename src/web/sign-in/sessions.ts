import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Person } from '../../core/ports/parked/sign-ins.ts';
import type { WebSession, WebSessionPort } from '../../core/ports/web/web-sessions.ts';
import { cookiesOf } from '../http.ts';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Whether two secrets are the same, in time that does not say how much of them is. */
export function sameSecret(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The web pages' sign-in: a random token in an HttpOnly cookie (SameSite=Lax, so a sign-in
 * redirect from the platform brings it back, and no other site's form does; Secure and `__Host-`
 * under https), and a row keyed by the token's hash.
 */
export class Sessions {
  readonly cookieName: string;

  constructor(
    private readonly store: WebSessionPort,
    private readonly options: { secure: boolean; sessionMs: number },
  ) {
    this.cookieName = options.secure ? '__Host-spool-session' : 'spool-session';
  }

  /** A new session for `person`; its cookie, to be set. */
  async start(person: Person): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.options.sessionMs);
    const csrf = randomBytes(24).toString('base64url');
    await this.store.create({ id: hashOf(token), person, csrf, expiresAt });
    return this.cookie(token, Math.floor(this.options.sessionMs / 1000));
  }

  /** The request's session, while it lasts. */
  async of(req: IncomingMessage): Promise<WebSession | undefined> {
    const token = cookiesOf(req).get(this.cookieName);
    return token && /^[\w-]{43}$/.test(token) ? this.store.find(hashOf(token)) : undefined;
  }

  /** Ends `id` of the workspace (sign-out, or an admin's on the sign-ins page). */
  end(id: string, where: { platform: string; workspace: string }): Promise<boolean> {
    return this.store.remove(id, where);
  }

  list(where: { platform: string; workspace: string; user?: string }): Promise<WebSession[]> {
    return this.store.list(where);
  }

  /** The cookie that removes the session's from the browser. */
  get cleared(): string {
    return this.cookie('', 0);
  }

  private cookie(value: string, maxAge: number): string {
    const secure = this.options.secure ? '; Secure' : '';
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
  }
}
