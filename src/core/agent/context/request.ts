import { microcompact, type MicrocompactOptions } from './microcompact.ts';
import { previewLongUserMessages, type UserPreview } from './long-messages.ts';
import { countRepairs, repairToolPairing } from './pairing.ts';
import { derivedCalls, viewOfReading } from './reading-view.ts';
import { wellFormedMessage } from '../../well-formed.ts';
import type { Message } from '../../ports/conversation.ts';

/**
 * 0: normal; 1: the window could not take the request, so the current turn's results are cut to
 * head and tail; 2: cut harder, and only the previous turn kept before this one; 3: no turn kept
 * before this one, and this turn's results a line each, naming them and how to read them: what
 * is left is the system prompt, the person's message and this turn's calls.
 */
export type OverflowLevel = 0 | 1 | 2 | 3;

/** The most overflow there is. */
const LAST_LEVEL = 3;

function harder(options: MicrocompactOptions, level: OverflowLevel): MicrocompactOptions {
  if (level < 2) return options;
  const half = (n: number) => Math.max(1, Math.floor(n / 2));
  const [headChars, tailChars] =
    level === LAST_LEVEL ? [0, 0] : [half(options.headChars), half(options.tailChars)];
  return { ...options, minChars: half(options.minChars), headChars, tailChars };
}

/** The turns a request at `level` keeps: from the previous one at level 2, this one alone at 3. */
function recentTurns(transcript: readonly Message[], currentTurn: number, level: OverflowLevel) {
  if (level < 2) return transcript;
  return keepRecentTurns(transcript, level === LAST_LEVEL ? currentTurn : currentTurn - 1);
}

/**
 * Drops whole turns before `fromTurn` and says so in one line, so the model knows there was more.
 */
export function keepRecentTurns(messages: readonly Message[], fromTurn: number): Message[] {
  const kept = messages.filter((m) => m.turn >= fromTurn);
  const dropped = messages.length - kept.length;
  if (dropped === 0) return [...messages];
  const note = `[${dropped} earlier messages of this conversation were left out to fit the model's context window.]`;
  return [{ role: 'user', content: note, turn: fromTurn }, ...kept];
}

export interface RequestOptions {
  compaction: MicrocompactOptions;
  /** 0 normally; 1 to 3 after the request was found too long for the window. */
  level?: OverflowLevel;
  /**
   * What this turn's pages, matches and hits may add up to in the request (see `viewOfReading`).
   */
  viewChars: number;
  userPreview?: UserPreview;
  /** A user's own transform (the `transformContext` hook), before repair. */
  transform?: (messages: Message[]) => Message[];
}

/**
 * The messages of one request: long user messages previewed, microcompaction (harder on
 * overflow), what the model read kept in view within `viewChars`, the user's transform, text made
 * well-formed, then pairing repair last, so whatever came before, the API gets a well-formed
 * history.
 */
export function buildRequestMessages(
  transcript: readonly Message[],
  currentTurn: number,
  options: RequestOptions,
): { messages: Message[]; repairs: number } {
  const level = options.level ?? 0;
  const recent = recentTurns(transcript, currentTurn, level);
  const shown = options.userPreview ? previewLongUserMessages(recent, options.userPreview) : recent;
  // Finished turns are compacted always; on overflow, the current turn's results are cut too.
  const compacted = microcompact(shown, currentTurn, harder(options.compaction, level), {
    cutCurrent: level > 0,
    views: new Set(derivedCalls(shown).keys()),
  });
  const viewed = viewOfReading(compacted, currentTurn, options.viewChars);
  // Stored text is well-formed already; a transcript from an older version or an import may not be.
  const unrepaired = (options.transform?.(viewed) ?? viewed).map(wellFormedMessage);
  const messages = repairToolPairing(unrepaired);
  return { messages, repairs: countRepairs(unrepaired, messages) };
}

/** The least of a turn's reading kept in view before a request is given up as too long. */
export const MIN_VIEW_CHARS = 250;

/**
 * How a request is fitted to the model's window: how hard older turns are compacted, how much of
 * this turn's reading stays in view.
 */
export interface Fit {
  level: OverflowLevel;
  viewChars: number;
}

/**
 * The next smaller way to fit a request that is too long, or none: older turns compacted harder
 * first, up to none of them kept and this turn's results a line each, then less of this turn's
 * reading (`readChars` of it) kept in view, while that still leaves something out. What the model
 * read is the last thing to give way.
 */
export function nextFit({ level, viewChars }: Fit, readChars: number): Fit | undefined {
  if (level < LAST_LEVEL) return { level: (level + 1) as OverflowLevel, viewChars };
  const narrower = Math.floor(Math.min(viewChars, readChars) / 2);
  return narrower >= MIN_VIEW_CHARS ? { level, viewChars: narrower } : undefined;
}
