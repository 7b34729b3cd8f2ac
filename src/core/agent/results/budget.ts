import { buildPreview, previewWithin, type PreviewSizes } from './preview.ts';

export interface ResultBudget extends PreviewSizes {
  /** A single result longer than this is sent as a preview. */
  maxChars: number;
  /** What the results of one user turn may add up to. */
  turnBudgetChars: number;
}

export interface BudgetedResult {
  toolCallId: string;
  content: string;
  /** Bounded already (a page): counted, but never previewed. */
  bounded?: boolean;
}

/**
 * The most chars each of results this long may take so that together they fit `available`: the
 * shorter ones whole, the rest an equal share of what they leave (Infinity: all fit whole).
 */
export function shareOf(lengths: readonly number[], available: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let left = Math.max(0, available);
  for (const [i, length] of sorted.entries()) {
    const share = left / (sorted.length - i);
    if (length > share) return Math.floor(share);
    left -= length;
  }
  return Infinity;
}

/**
 * Fits a step's results into the budgets. Every result over `maxChars` becomes a preview; then,
 * while they exceed what is left of the turn's budget (`usedChars` is what earlier steps of the
 * turn spent) or `roomChars`, what the model's window can take of them, the largest become
 * previews first; and if previews of the usual size are still too many, each result longer than
 * its share of what is left becomes a preview of its share, or, where a share is too small for one,
 * a line naming it and how to read it. Bounded results (pages) count, but are never previewed. The
 * store keeps every result whole, and get_continuation reads on.
 */
export function applyResultBudget<T extends BudgetedResult>(
  results: T[],
  budget: ResultBudget,
  usedChars = 0,
  roomChars = Infinity,
): T[] {
  const out = results.map((r) =>
    !r.bounded && r.content.length > budget.maxChars
      ? { ...r, content: buildPreview(r.content, r.toolCallId, budget) }
      : r,
  );
  const remaining = Math.min(budget.turnBudgetChars - usedChars, roomChars);
  let total = out.reduce((sum, r) => sum + r.content.length, 0);
  const previewed = new Set(out.map((r, i) => (r === results[i] ? -1 : i)));
  const candidates = out
    .map((r, i) => ({ i, length: r.content.length }))
    .filter(({ i }) => !out[i]!.bounded && !previewed.has(i))
    .sort((a, b) => b.length - a.length || a.i - b.i);
  for (const { i } of candidates) {
    if (total <= remaining) break;
    const original = out[i]!;
    const preview = buildPreview(original.content, original.toolCallId, budget);
    if (preview.length >= original.content.length) continue;
    total -= original.content.length - preview.length;
    out[i] = { ...original, content: preview };
  }
  return total <= remaining ? out : shared(out, results, remaining, budget);
}

/** `fitted` with each unbounded result longer than its share of `available` cut to its share. */
function shared<T extends BudgetedResult>(
  fitted: T[],
  results: readonly T[],
  available: number,
  sizes: PreviewSizes,
): T[] {
  const fixed = fitted.reduce((sum, r) => sum + (r.bounded ? r.content.length : 0), 0);
  const share = shareOf(
    fitted.filter((r) => !r.bounded).map((r) => r.content.length),
    available - fixed,
  );
  return fitted.map((r, i) =>
    r.bounded || r.content.length <= share
      ? r
      : { ...r, content: previewWithin(results[i]!.content, r.toolCallId, share, sizes) },
  );
}

/**
 * Of what the window can still take beside the request that made a step's calls (and the message
 * that made them), the share the step's results may fill: the rest is left to what the model reads
 * next (a page, matching lines), and to the error of an estimate.
 */
export const RESULTS_SHARE = 0.75;

/** What the model's window can take beside the request that made a step's calls, in tokens. */
export interface StepRoom {
  /** Beside that request and its reply budget (see `LlmPort.room`). */
  roomTokens: number;
  /** The message that made the calls. */
  callsTokens: number;
  /** The results' messages without their text, and their text. */
  overheadTokens: number;
  textTokens: number;
  /** Chars of the results' text. */
  textChars: number;
}

/**
 * Chars of the results' text the next request can take (`RESULTS_SHARE` of the room the calls
 * leave), at the chars a token their text holds; Infinity when they have no text.
 */
export function roomForResults(room: StepRoom): number {
  if (room.textChars === 0 || room.textTokens <= 0) return Infinity;
  const tokens = (room.roomTokens - room.callsTokens) * RESULTS_SHARE - room.overheadTokens;
  return Math.max(0, Math.floor((tokens * room.textChars) / room.textTokens));
}

/**
 * Whether `chars` of results and their calls surely fit their share of `roomTokens` without
 * measuring: a token holds at least a char of any text but for rare symbols, and each message
 * adds a few.
 */
export const surelyFits = (chars: number, messages: number, roomTokens: number): boolean =>
  chars + 8 * messages <= roomTokens * RESULTS_SHARE;
