/**
 * Ranges of a stored text, `[start, end)` in UTF-16 code units: get_continuation's offsets. What
 * the model has in view of one result is a sorted list of disjoint spans.
 */
export type Span = readonly [start: number, end: number];

/** The spans sorted and merged, touching ones included, empty ones dropped. */
export function unite(spans: readonly Span[]): Span[] {
  const sorted = spans.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The parts of `span` that `covered` (united) does not cover, in order. */
export function subtract(span: Span, covered: readonly Span[]): Span[] {
  const out: Span[] = [];
  let at = span[0];
  for (const [a, b] of covered) {
    if (b <= at || a >= span[1]) continue;
    if (a > at) out.push([at, a]);
    at = Math.max(at, b);
  }
  if (at < span[1]) out.push([at, span[1]]);
  return out;
}

export const spanChars = (spans: readonly Span[]): number =>
  spans.reduce((n, [a, b]) => n + b - a, 0);

/**
 * The first offset at or after `from` that `covered` (united) leaves out, wrapping to 0; undefined
 * when all of `[0, total)` is covered.
 */
export function firstGap(
  covered: readonly Span[],
  from: number,
  total: number,
): number | undefined {
  const gaps = subtract([0, total], covered);
  const ahead = gaps.find(([, b]) => b > from);
  return ahead ? Math.max(ahead[0], from) : gaps[0]?.[0];
}
