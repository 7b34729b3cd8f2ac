import type { Naming, UsageReport, UsageRow } from '../../ports/spend.ts';
import type { FeedbackTally } from '../../ports/feedback.ts';
import { feedbackLine } from '../posts/feedback.ts';
import { amount } from '../rules/spend.ts';

/** Totals of some rows. */
export interface Sum {
  tokens: number;
  cost: number;
  unpriced: number;
}

const DAY_MS = 86_400_000;
const CHART_DAYS = 30;
const TOP = 10;

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The words `/usage` may take, each with what it adds. */
const USAGE_WORDS = { chart: 'the last 30 days as a chart' } as const;
export type UsageWord = keyof typeof USAGE_WORDS;

/**
 * What `/usage`'s words ask for (`command` as the person typed it, `accepted` the words that
 * platform takes), or one line naming what it did not understand (a word it does not take, or one
 * said twice) and what it takes.
 */
export function usageArguments(
  argument: string,
  { command, accepted }: { command: string; accepted: readonly UsageWord[] },
): { chart: boolean } | { problem: string } {
  const said = argument.trim().split(/\s+/).filter(Boolean);
  const words = said.map((word) => word.toLowerCase());
  const unknown = said.filter((_, i) => !(accepted as readonly string[]).includes(words[i]!));
  const again = said.filter((_, i) => words.indexOf(words[i]!) !== i);
  if (unknown.length === 0 && again.length === 0) return { chart: words.includes('chart') };
  if (unknown.length === 0)
    return {
      problem: `I did not understand "${again.join(' ')}" again: \`${command}\` takes each word once.`,
    };
  const takes = accepted.map((word) => `\`${word}\` (${USAGE_WORDS[word]})`);
  return {
    problem: `I did not understand "${unknown.join(' ')}": \`${command}\` takes nothing${takes.length ? `, or ${takes.join(', or ')}` : ''}.`,
  };
}

/** The report covers today, this week (from Monday) and this month (UTC), and 30 days for the chart. */
export function reportStart(now: Date): Date {
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return new Date(Math.min(month.getTime(), now.getTime() - (CHART_DAYS - 1) * DAY_MS));
}

export function sum(rows: UsageRow[]): Sum {
  return rows.reduce(
    (s, r) => ({
      tokens: s.tokens + r.tokens,
      cost: s.cost + r.cost,
      unpriced: s.unpriced + r.unpriced,
    }),
    { tokens: 0, cost: 0, unpriced: 0 },
  );
}

/** Tokens, and the price where it is known (and that some of it is not). */
function spent(s: Sum, currency: string | undefined): string {
  const tokens = amount(s.tokens, 'tokens');
  if (!currency) return tokens;
  const priced = s.tokens === 0 || s.cost > 0 || s.unpriced === 0;
  const unknown = s.unpriced > 0 ? ` (${s.unpriced} requests of models with no price)` : '';
  return priced
    ? `${tokens} · ${amount(s.cost, 'cost', currency)}${unknown}`
    : `${tokens} · price unknown`;
}

/** Rows grouped by `keyOf`, each group's totals, the most tokens first. */
export function totalsBy(
  rows: UsageRow[],
  keyOf: (r: UsageRow) => string,
): Array<{ key: string; rows: UsageRow[]; sum: Sum }> {
  const groups = new Map<string, UsageRow[]>();
  for (const r of rows) groups.set(keyOf(r), [...(groups.get(keyOf(r)) ?? []), r]);
  return [...groups]
    .map(([key, rs]) => ({ key, rows: rs, sum: sum(rs) }))
    .sort((a, b) => b.sum.tokens - a.sum.tokens);
}

/** The biggest spenders of a grouping first, the rest summed. */
function ranked(
  rows: UsageRow[],
  keyOf: (r: UsageRow) => string,
  label: (key: string) => string,
  currency: string | undefined,
): string[] {
  const sums = totalsBy(rows, keyOf);
  const lines = sums.slice(0, TOP).map((g) => `• ${label(g.key)}: ${spent(g.sum, currency)}`);
  const rest = sums.slice(TOP);
  if (rest.length)
    lines.push(`• ${rest.length} more: ${spent(sum(rest.flatMap((g) => g.rows)), currency)}`);
  return lines;
}

export interface ReportOptions extends Naming {
  now: Date;
  /** Everyone's usage (an admin asked), or the asker's own. */
  everyone: boolean;
  currency?: string;
  /** This month's ratings of the answers the report covers, where ratings are kept. */
  feedback?: FeedbackTally;
}

/** Usage for today, this week and this month, by channel and (for an admin) by person. */
export function usageReport(rows: UsageRow[], o: ReportOptions): UsageReport {
  const today = dayOf(o.now);
  const monday = dayOf(
    new Date(
      Date.UTC(
        o.now.getUTCFullYear(),
        o.now.getUTCMonth(),
        o.now.getUTCDate() - ((o.now.getUTCDay() + 6) % 7),
      ),
    ),
  );
  const month = today.slice(0, 8) + '01';
  const since = (day: string) => rows.filter((r) => r.day >= day);
  const thisMonth = since(month);
  const text = [
    o.everyone ? '*Usage in this workspace* (everyone’s: you are an admin)' : '*Your usage here*',
    `Today: ${spent(sum(since(today)), o.currency)}`,
    `This week: ${spent(sum(since(monday)), o.currency)}`,
    `This month: ${spent(sum(thisMonth), o.currency)}`,
    ...(o.feedback ? [feedbackLine(o.feedback)] : []),
    ...(thisMonth.length
      ? [
          '',
          '*This month by channel*',
          ...ranked(thisMonth, (r) => r.channel, o.channel, o.currency),
          ...(o.everyone
            ? [
                '',
                '*This month by person*',
                ...ranked(
                  thisMonth,
                  (r) => r.user ?? '',
                  (id) => (id ? o.person(id) : 'before people were kept'),
                  o.currency,
                ),
              ]
            : []),
        ]
      : []),
    ...(o.currency
      ? []
      : ['', '_No prices are set (`prices` in the policy file), so only tokens are counted._']),
  ].join('\n');
  const days = Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = dayOf(new Date(o.now.getTime() - (CHART_DAYS - 1 - i) * DAY_MS));
    const s = sum(rows.filter((r) => r.day === day));
    return { day, tokens: s.tokens, cost: s.cost };
  });
  return { text, days, ...(o.currency ? { currency: o.currency } : {}) };
}
