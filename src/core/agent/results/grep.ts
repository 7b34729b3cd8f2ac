import { runInNewContext } from 'node:vm';
import { moreMatchesMarker } from '../../markers.ts';
import { errorResult, type ToolOutcome } from '../../ports/tools.ts';

export interface GrepLimits {
  /** Matching lines shown per call; the rest are counted. */
  maxMatches: number;
  /** What one answer may add up to; a long line is cut around its match. */
  maxChars: number;
  /** A pattern that backtracks for longer than this is stopped: the model wrote it, not us. */
  timeoutMs: number;
}

export const DEFAULT_GREP_LIMITS: GrepLimits = { maxMatches: 20, maxChars: 6_000, timeoutMs: 250 };

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The pattern as a case-insensitive, line-wise regular expression; one that does not compile is
 * matched literally.
 */
function compile(pattern: string): { regex: RegExp; literal: boolean } {
  try {
    return { regex: new RegExp(pattern, 'gim'), literal: false };
  } catch {
    return { regex: new RegExp(escape(pattern), 'gim'), literal: true };
  }
}

/**
 * Offsets of the first match on each matching line from `from` on (at most `keep`), and how many
 * lines match in all.
 */
function matchingLines(
  text: string,
  regex: RegExp,
  from: number,
  keep: number,
  timeoutMs: number,
): { starts: number[]; count: number } {
  const script = `
    const starts = []; let count = 0; re.lastIndex = from;
    for (let m; (m = re.exec(text)) !== null; ) {
      if (count++ < keep) starts.push(m.index);
      const eol = text.indexOf('\\n', m.index + Math.max(1, m[0].length) - 1);
      if (eol === -1) break;
      re.lastIndex = eol + 1;
    }
    ({ starts, count })`;
  return runInNewContext(script, { text, re: regex, from, keep }, { timeout: timeoutMs }) as {
    starts: number[];
    count: number;
  };
}

const endOfLine = (text: string, at: number) => {
  const nl = text.indexOf('\n', at);
  return nl === -1 ? text.length : nl;
};

/**
 * The line around `at`, cut to `width` characters centred on it. Returns its text and where it
 * starts.
 */
function lineAround(text: string, at: number, width: number): { start: number; line: string } {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const lineEnd = endOfLine(text, at);
  const start = Math.max(lineStart, Math.min(at - Math.floor(width / 2), lineEnd - width));
  return { start, line: text.slice(start, Math.min(lineEnd, start + width)) };
}

/** The lines of a text that match a pattern, as `findLines` finds them. */
export interface FoundLines {
  /** Each shown match: its offset, and its line cut around it (from `start`). */
  lines: Array<{ at: number; start: number; line: string }>;
  /** How many lines match in all, from the offset on. */
  count: number;
  /** The pattern was not a valid regular expression, so it was matched literally. */
  literal: boolean;
  /** Where the next search starts, past the last line shown. */
  next: number;
}

/**
 * The lines of `full` that match `pattern` (case-insensitive, line-wise), from `offset` on,
 * bounded by `limits`; 'timeout' for a pattern that backtracks too long. get_continuation and the
 * web pages' find both use it.
 */
export function findLines(
  full: string,
  pattern: string,
  offset: number,
  limits = DEFAULT_GREP_LIMITS,
): FoundLines | 'timeout' {
  const { regex, literal } = compile(pattern);
  let found: { starts: number[]; count: number };
  try {
    found = matchingLines(full, regex, offset, limits.maxMatches, limits.timeoutMs);
  } catch {
    return 'timeout';
  }
  const width = Math.floor(limits.maxChars / limits.maxMatches) - '@1234567: …'.length;
  const lines = found.starts.map((at) => ({ at, ...lineAround(full, at, width) }));
  const next = Math.min(full.length, endOfLine(full, found.starts.at(-1) ?? offset) + 1);
  return { lines, count: found.count, literal, next };
}

/**
 * The lines of a stored result that match `pattern`, from `offset` on: each with the offset of
 * its match, which get_continuation reads on from. Bounded in size; beyond the bound, how many
 * more there are and where the next call starts.
 */
export function grepResult(
  full: string,
  toolCallId: string,
  pattern: string,
  offset: number,
  limits = DEFAULT_GREP_LIMITS,
): ToolOutcome {
  const found = findLines(full, pattern, offset, limits);
  if (found === 'timeout')
    return errorResult(
      `pattern ${JSON.stringify(pattern)} took too long to match; use a simpler one (plain words match literally)`,
    );
  const how = found.literal
    ? 'not a valid regular expression, so matched literally'
    : 'case-insensitive';
  const head = `${found.count} matching lines for ${JSON.stringify(pattern)} (${how}) in ${full.length} chars from offset ${offset}:`;
  const lines = found.lines.map(
    ({ at, start, line }) => `@${at}: ${start > 0 && full[start - 1] !== '\n' ? '…' : ''}${line}`,
  );
  const more = found.count - found.lines.length;
  return {
    content: [
      head,
      ...lines,
      ...(more > 0 ? [moreMatchesMarker(toolCallId, more, pattern, found.next)] : []),
    ].join('\n'),
    isError: false,
  };
}
