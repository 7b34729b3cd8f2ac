import { DiscordAPIError } from 'discord.js';

/** Discord's codes for an interaction token that expired (15 minutes) or is unknown. */
const EXPIRED_TOKEN_CODES = new Set([50027, 10015]);

/** The interaction's token no longer answers: its 15 minutes are over (or it is unknown). */
export const isExpired = (error: unknown) =>
  error instanceof DiscordAPIError &&
  typeof error.code === 'number' &&
  EXPIRED_TOKEN_CODES.has(error.code);

/**
 * Discord refused a request for good: not a rate limit, not an expired token. A message with a
 * file refused so (too large, no Attach Files permission) can still go without it.
 */
export const refusesFile = (error: unknown): error is DiscordAPIError =>
  error instanceof DiscordAPIError &&
  error.status >= 400 &&
  error.status < 500 &&
  error.status !== 429 &&
  !isExpired(error);

/** The most of a page's words a refusal quotes. */
const PAGE_WORDS_CHARS = 120;

/**
 * What Discord answered a refused request, in a few words: its own message, or, where the answer
 * was not Discord's JSON (the HTML page of the proxy before it, as for a 413; discord.js reads
 * "No Description" then), the status and the page's title or text.
 */
export function discordAnswer(error: DiscordAPIError): string {
  const raw = error.rawError as unknown;
  if (!(raw instanceof ArrayBuffer)) return error.message;
  const page = new TextDecoder().decode(raw);
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(page)?.[1];
  const words = (title ?? page.replace(/<(script|style)[\s\S]*?<\/\1>|<[^>]*>/gi, ' '))
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, PAGE_WORDS_CHARS);
  return `HTTP ${error.status}${words ? `: ${words}` : ''}`;
}
