import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The cookie that ties a sign-in link's steps to one browser: first a random value the platform's
 * sign-in must bring back (no one can land another browser's sign-in on this one), then the proof
 * that this browser signed in as the person the link was sent to (no one can hand the
 * authorization server's page to someone else's browser and have it count).
 */
export class LinkCookie {
  private readonly path: string;
  private readonly secure: boolean;

  /** `linkUrl`: where the links point; the cookie is sent back to its folder (the redirect's too). */
  constructor(linkUrl: string) {
    const folder = new URL('.', linkUrl);
    this.path = folder.pathname;
    this.secure = folder.protocol === 'https:';
  }

  /** One cookie per link, so that links followed side by side in one browser do not mix. */
  static nameOf(state: string): string {
    return `spool_link_${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;
  }

  /**
   * What a browser that signed in as the link's person holds: only Spool can make it, from the
   * link's PKCE verifier, which never leaves Spool.
   */
  static proofOf(state: string, codeVerifier: string): string {
    return createHmac('sha256', codeVerifier).update(`browser ${state}`).digest('base64url');
  }

  /** Sets the link's cookie until the link expires (or clears it, with no value). */
  set(state: string, value: string | undefined, expiresAt: Date): string {
    const seconds = value ? Math.max(0, Math.ceil((expiresAt.getTime() - Date.now()) / 1000)) : 0;
    // Lax: sent on the top-level redirect back from the platform and the authorization server.
    return [
      `${LinkCookie.nameOf(state)}=${value ?? ''}`,
      `Path=${this.path}`,
      `Max-Age=${seconds}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure ? ['Secure'] : []),
    ].join('; ');
  }

  /** Whether the browser's cookie for this link holds `expected`. */
  static holds(cookieHeader: string | undefined, state: string, expected: string): boolean {
    const name = LinkCookie.nameOf(state);
    const held = (cookieHeader ?? '')
      .split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(`${name}=`))
      ?.slice(name.length + 1);
    if (!held) return false;
    const digest = (s: string) => createHash('sha256').update(s).digest();
    return timingSafeEqual(digest(held), digest(expected));
  }
}
