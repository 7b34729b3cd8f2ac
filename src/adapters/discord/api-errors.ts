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
