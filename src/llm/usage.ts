import type { LlmUsage, UsageAdjustment } from '../core/ports/llm.ts';

/**
 * The most one count may be: a billion tokens, far past any model's window, and small enough that
 * a prompt and a completion add up to a total the database's int columns hold (2^31 − 1).
 */
export const MAX_COUNT = 1_000_000_000;
/** The most a request's total may be: its two parts at their most. */
export const MAX_TOTAL = 2 * MAX_COUNT;

type Field = UsageAdjustment['field'];
type Fix = UsageAdjustment['fix'];

/** One count as the server sent it: a whole number in bounds, or none, and what was done. */
interface Reading {
  value?: number;
  fix?: Fix;
  reported: unknown;
}

/** Not a count (null, a string, NaN, ±Infinity), negative or past `bound`: dropped. */
function reading(reported: unknown, bound = MAX_COUNT): Reading {
  if (reported === undefined) return { reported };
  if (typeof reported !== 'number' || !Number.isFinite(reported) || reported < 0)
    return { fix: 'dropped', reported };
  const whole = Math.round(reported);
  if (whole > bound) return { fix: 'dropped', reported };
  return whole === reported
    ? { value: whole, reported }
    : { value: whole, fix: 'rounded', reported };
}

const detail = (details: unknown, name: string): unknown =>
  typeof details === 'object' && details !== null
    ? (details as Record<string, unknown>)[name]
    : undefined;

/** What a server sent, for a log line: strings quoted, numbers and the rest as JavaScript writes them. */
const shown = (value: unknown): string =>
  typeof value === 'string' || (typeof value === 'object' && value !== null)
    ? JSON.stringify(value)
    : String(value);

/** A part missing or dropped, from the total and the other part, where they give it. */
function fromTotal(part: Reading, total: Reading, other: Reading): { value: number; fix?: Fix } {
  if (part.value !== undefined) return { value: part.value, fix: part.fix };
  const derived =
    total.value !== undefined && other.value !== undefined ? total.value - other.value : -1;
  return derived >= 0 && derived <= MAX_COUNT
    ? { value: derived, fix: 'derived' }
    : { value: 0, fix: 'dropped' };
}

/** A part of a part (cached of prompt, reasoning of completion): at most the whole. */
function within(part: Reading, whole: number): { value: number; fix?: Fix } {
  const value = part.value ?? 0;
  return value > whole ? { value: whole, fix: 'clamped' } : { value, fix: part.fix };
}

/** The total as reported, unless missing, dropped or short of its parts: then their sum. */
function totalOf(total: Reading, sum: number): { value: number; fix?: Fix } {
  if (total.value === undefined)
    return { value: sum, fix: total.reported === undefined ? 'derived' : 'dropped' };
  return total.value < sum
    ? { value: sum, fix: 'clamped' }
    : { value: total.value, fix: total.fix };
}

/**
 * A completion's `usage` as Spool keeps it: counts the server got wrong are clamped or dropped,
 * never passed on to fail the write that stores the answer, and each is named in `adjusted` (for
 * a warning and a metric). Undefined when the server sent none.
 *
 * - not a count (null, a string, NaN, ±Infinity), negative, or over MAX_COUNT: dropped; a dropped or
 *   missing prompt or completion is the total less the other part where both are known, else 0;
 * - a fraction: rounded;
 * - cached over prompt, reasoning over completion: clamped to it;
 * - a total missing, dropped or short of prompt + completion: their sum.
 */
export function readUsage(raw: unknown, model: string, responseId?: string): LlmUsage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as Record<string, unknown>;
  const read = {
    prompt: reading(u.prompt_tokens),
    completion: reading(u.completion_tokens),
    total: reading(u.total_tokens, MAX_TOTAL),
    cached: reading(detail(u.prompt_tokens_details, 'cached_tokens')),
    reasoning: reading(detail(u.completion_tokens_details, 'reasoning_tokens')),
  };
  const prompt = fromTotal(read.prompt, read.total, read.completion);
  const completion = fromTotal(read.completion, read.total, read.prompt);
  const kept: Array<[Field, { value: number; fix?: Fix }, unknown]> = [
    ['prompt_tokens', prompt, read.prompt.reported],
    ['cached_tokens', within(read.cached, prompt.value), read.cached.reported],
    ['completion_tokens', completion, read.completion.reported],
    ['reasoning_tokens', within(read.reasoning, completion.value), read.reasoning.reported],
    ['total_tokens', totalOf(read.total, prompt.value + completion.value), read.total.reported],
  ];
  const adjusted = kept.flatMap(([field, { fix }, reported]) =>
    fix ? [{ field, fix, reported: shown(reported) }] : [],
  );
  const [p, c, o, r, t] = kept.map(([, { value }]) => value) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    model,
    promptTokens: p,
    cachedPromptTokens: c,
    completionTokens: o,
    reasoningTokens: r,
    totalTokens: t,
    ...(responseId ? { responseId } : {}),
    ...(adjusted.length ? { adjusted } : {}),
  };
}
