/**
 * The chars a token is taken to hold when room in the model's window is turned into a page:
 * fewer than any text measured holds (a CSV, the densest, holds 1.75 with o200k; prose about 4),
 * so that a page sized by it fits whatever it holds, at the cost of some of the window unused.
 */
export const CHARS_A_TOKEN = 1.5;

/** Where a page is read, and what the request it goes into can still take. */
export interface PageRoom {
  /** Chars of the result from the page's offset to its end. */
  restChars: number;
  /** What the request keeps in view of this turn's reading: no page is larger. */
  viewChars: number;
  /** What this turn's pages, matches and hits add up to so far, as stored. */
  readChars: number;
  /**
   * Tokens the model's window can still take beside the request that asked for the page and its
   * reply budget; undefined when the window is not known.
   */
  roomTokens?: number;
  /** Results the step's calls add to the request, this page among them: they share the room. */
  calls: number;
}

export interface PageSizes {
  /** A preview's size, which every request is sized to take: a page, unless the rest fits. */
  chunkChars: number;
  /** CONTINUATION_CHUNK_CHARS, when set: every page is this size, as it was, and none larger. */
  maxChunkChars?: number;
}

/**
 * How many chars a page takes: with the model's window known, the whole rest of the result when it
 * fits both the page's share of what the request can still take and what the turn's budget has
 * left (so that no page read before it gives way), which makes reading a document that fits the
 * window one page; otherwise, and with the window unknown, a page as before: `maxChunkChars`,
 * else `chunkChars`. A document that does not fit reads as before, so that the view holds as much
 * of it at the end as it did. Never more than the view keeps (`viewChars`) or `maxChunkChars`.
 */
export function pageChars(room: PageRoom, sizes: PageSizes): number {
  const page = Math.min(room.viewChars, sizes.maxChunkChars ?? sizes.chunkChars);
  if (room.roomTokens === undefined) return page;
  const share = (Math.max(0, room.roomTokens) * CHARS_A_TOKEN) / Math.max(1, room.calls);
  const holds = Math.min(share, room.viewChars - room.readChars, sizes.maxChunkChars ?? Infinity);
  return room.restChars <= holds ? Math.max(page, room.restChars) : page;
}
