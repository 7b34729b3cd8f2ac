import { buildPreview, type PreviewSizes } from './preview.ts';

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
 * Fits a batch of tool results into the budgets: every result over `maxChars` becomes a preview,
 * then, while the batch exceeds what is left of the turn budget, the largest remaining results
 * become previews first. `usedChars` is what earlier batches of the same turn already spent.
 */
export function applyResultBudget<T extends BudgetedResult>(
  results: T[],
  budget: ResultBudget,
  usedChars = 0,
): T[] {
  const out = results.map((r) =>
    !r.bounded && r.content.length > budget.maxChars
      ? { ...r, content: buildPreview(r.content, r.toolCallId, budget) }
      : r,
  );
  const remaining = budget.turnBudgetChars - usedChars;
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
  return out;
}
