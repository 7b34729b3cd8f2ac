/**
 * A person's browser, for sign-in flows across sites: it follows redirects itself and keeps each
 * site's cookies (by host, whatever the port, as a browser does), so that what a site set comes
 * back to it alone.
 */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  /** `cookies`: what the browser holds already, by a URL of its site (a platform's session). */
  constructor(cookies: Record<string, string> = {}) {
    for (const [url, cookie] of Object.entries(cookies)) this.keep(new URL(url).hostname, cookie);
  }

  /**
   * Opens `url` and follows its redirects; stops before an address `stopAt` names (returning it
   * unopened), else at the first page that is not a redirect.
   */
  async open(
    url: string,
    stopAt: (next: URL) => boolean = () => false,
  ): Promise<{ status: number; text: string; url: string }> {
    let at = new URL(url);
    for (let hops = 0; hops < 10; hops++) {
      const cookie = [...(this.jar.get(at.hostname) ?? [])].map(([n, v]) => `${n}=${v}`).join('; ');
      const response = await fetch(at, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const set of response.headers.getSetCookie()) this.keep(at.hostname, set);
      const location = response.headers.get('location');
      const text = await response.text();
      if (!location || response.status < 300 || response.status >= 400)
        return { status: response.status, text, url: at.href };
      const next = new URL(location, at);
      if (stopAt(next)) return { status: response.status, text, url: next.href };
      at = next;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  private keep(host: string, setCookie: string): void {
    const [pair = '', ...attributes] = setCookie.split(';').map((p) => p.trim());
    const eq = pair.indexOf('=');
    const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
    const cookies = this.jar.get(host) ?? new Map<string, string>();
    this.jar.set(host, cookies);
    if (attributes.some((a) => a.toLowerCase() === 'max-age=0')) cookies.delete(name);
    else cookies.set(name, value);
  }
}
