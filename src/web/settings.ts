import type { SettingsReader } from '../core/ports/settings.ts';

/** Spool's web pages (docs/web-pages.md). */
export interface WebSettings {
  /** WEB_PAGES: served on Spool's HTTP server (PORT) unless false. */
  enabled: boolean;
  /** PUBLIC_URL: the pages' address as people reach it; links in replies point there. */
  publicUrl?: string;
  /** WEB_SESSION_HOURS: how long a sign-in to the pages lasts (12 hours). */
  sessionMs: number;
  /** WEB_PAGE_CHARS: how much of a result one page shows (50,000 characters). */
  pageChars: number;
}

export function webSettings(r: SettingsReader): WebSettings {
  const publicUrl = r.url('PUBLIC_URL');
  return {
    enabled: r.flag('WEB_PAGES', true),
    ...(publicUrl ? { publicUrl } : {}),
    sessionMs: r.int('WEB_SESSION_HOURS', 12) * 3_600_000,
    pageChars: r.int('WEB_PAGE_CHARS', 50_000, 1_000),
  };
}

/** Where the pages live on Spool's HTTP server. */
export const WEB_PATH = '/web';
