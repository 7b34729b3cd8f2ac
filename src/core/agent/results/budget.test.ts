import { describe, expect, it } from 'vitest';
import { applyResultBudget } from './budget.ts';

const budget = { maxChars: 1000, turnBudgetChars: 2500, headChars: 200, tailChars: 100 };
const text = (n: number, c = 'a') => (c.repeat(49) + '\n').repeat(Math.ceil(n / 50)).slice(0, n);

describe('applyResultBudget', () => {
  it('passes results within both budgets through unchanged', () => {
    const results = [{ toolCallId: 'a', content: text(900) }];
    expect(applyResultBudget(results, budget)).toEqual(results);
  });

  it('previews a single result over maxChars', () => {
    const [out] = applyResultBudget([{ toolCallId: 'a', content: text(5000) }], budget);
    expect(out!.content).toContain('[truncated — showing');
    expect(out!.content).toContain('/5000 chars');
    expect(out!.content.length).toBeLessThan(500);
  });

  it('cuts the largest results first until the turn fits', () => {
    const results = [
      { toolCallId: 'small', content: text(700, 's') },
      { toolCallId: 'big', content: text(990, 'b') },
      { toolCallId: 'mid', content: text(950, 'm') },
    ];
    const out = applyResultBudget(results, budget);
    expect(out[0]!.content).toBe(results[0]!.content);
    expect(out[1]!.content).toContain('tool_call_id="big"');
    expect(out[2]!.content).toBe(results[2]!.content);
    expect(out.reduce((n, r) => n + r.content.length, 0)).toBeLessThanOrEqual(2500);
  });

  it('counts what earlier batches of the turn spent', () => {
    const out = applyResultBudget([{ toolCallId: 'a', content: text(900) }], budget, 2000);
    expect(out[0]!.content).toContain('[truncated');
  });

  it('never cuts bounded results', () => {
    const page = { toolCallId: 'p', content: text(5000), bounded: true };
    expect(applyResultBudget([page], budget)[0]).toBe(page);
  });
});
