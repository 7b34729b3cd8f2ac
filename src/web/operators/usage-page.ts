import {
  reportStart,
  sum,
  totalsBy,
  usageReport,
  type Sum,
} from '../../core/delivery/commands/usage-report.ts';
import { amount, periodOf, type SpendCap } from '../../core/delivery/rules/spend.ts';
import type { HeldSpend } from '../../core/ports/web/operators.ts';
import type { UsageRow } from '../../core/ports/spend.ts';
import { html, type Html, type HtmlValue } from '../html.ts';
import { inert } from '../inert.ts';
import type { Viewer } from '../layout.ts';
import { usageChart } from './usage-chart.ts';
import { dataTable, when } from './table.ts';

/** What the usage page shows, read by the page's handler. */
export interface UsageView {
  rows: UsageRow[];
  holds: HeldSpend[];
  caps: SpendCap[];
  currency?: string;
  now: Date;
}

const asIs = (id: string) => id;

/** A total's cells: tokens, and where prices are set its cost and the requests with no price. */
const sumCells = (s: Sum, currency: string | undefined): HtmlValue[] =>
  currency
    ? [amount(s.tokens, 'tokens'), amount(s.cost, 'cost', currency), String(s.unpriced)]
    : [amount(s.tokens, 'tokens')];

/** A total in words: tokens, and the cost where prices are set. */
const spentText = (s: Sum, currency: string | undefined) =>
  currency
    ? `${amount(s.tokens, 'tokens')} · ${amount(s.cost, 'cost', currency)}`
    : amount(s.tokens, 'tokens');

const sumHeads = (currency: string | undefined) =>
  currency ? ['Tokens', 'Cost', 'Requests with no price'] : ['Tokens'];

function grouping(
  caption: string,
  head: string,
  rows: UsageRow[],
  keyOf: (r: UsageRow) => string,
  currency: string | undefined,
): Html {
  const groups = totalsBy(rows, keyOf).map((g) => [
    inert(g.key || 'before people were kept'),
    ...sumCells(g.sum, currency),
  ]);
  return dataTable(caption, [head, ...sumHeads(currency)], groups, 'No usage this month.');
}

/** The cap's place, as its `match` names it. */
const placeOf = ({ match }: SpendCap) =>
  [match?.platform, match?.workspace, match?.channel].filter(Boolean).join(' / ') || 'everywhere';

/** What one channel, person or the workspace has spent most in the cap's period (of `rows`). */
function mostSpent(cap: SpendCap, rows: UsageRow[], now: Date): string {
  const since = periodOf(cap.period, now).since.toISOString().slice(0, 10);
  const counted = rows.filter(
    (r) => r.day >= since && (!cap.match?.channel || r.channel === cap.match.channel),
  );
  const keyOf = (r: UsageRow) =>
    cap.per === 'channel' ? r.channel : cap.per === 'user' ? (r.user ?? '') : '';
  const [top] = totalsBy(counted, keyOf);
  if (!top) return 'nothing yet';
  const unit = cap.spend === undefined ? 'tokens' : 'cost';
  const spent = amount(unit === 'tokens' ? top.sum.tokens : top.sum.cost, unit);
  return cap.per === 'workspace' ? spent : `${spent} (${top.key})`;
}

function capsAndHolds(view: UsageView, everyone: boolean): Html {
  const { caps, holds, currency, now, rows } = view;
  const capRows = caps.map((cap) => [
    `each ${cap.per}`,
    `a ${cap.period} (UTC)`,
    cap.spend === undefined ? amount(cap.tokens!, 'tokens') : amount(cap.spend, 'cost', currency),
    placeOf(cap),
    // A channel's or the workspace's spending is everyone's: an admin's to see.
    everyone || cap.per === 'user' ? mostSpent(cap, rows, now) : '',
  ]);
  const holdRows = holds.map((h) => [
    inert(h.channel),
    inert(h.user),
    amount(h.tokens, 'tokens'),
    h.cost === undefined ? 'price unknown' : amount(h.cost, 'cost', currency),
    when(h.expiresAt),
  ]);
  return html`${dataTable(
    'Spend caps',
    ['Counts', 'Over', 'Limit', 'Where', everyone ? 'Most spent now' : 'Yours now'],
    capRows,
    'No spend caps are set (caps in the policy file).',
  )}
  ${dataTable(
    'Held now',
    ['Channel', 'Person', 'Tokens', 'Cost', 'Until'],
    holdRows,
    'No model request holds anything against the caps now.',
  )}`;
}

/** /web/usage's body: this month's usage by person, channel and model, 30 days a day, the caps. */
export function usageBody(view: UsageView, viewer: Viewer): Html {
  const { rows, currency, now } = view;
  const everyone = viewer.admin;
  const report = usageReport(rows, { now, everyone, currency, channel: asIs, person: asIs });
  const month = now.toISOString().slice(0, 8) + '01';
  const thisMonth = rows.filter((r) => r.day >= month);
  const days = report.days.map((d) => [d.day, amount(d.tokens, 'tokens')]);
  return html`<p>
      ${everyone ? 'Everyone’s usage in your workspace (you are an admin).' : 'Your usage in this workspace.'}
      This month: ${spentText(sum(thisMonth), currency)}.
      ${currency ? '' : html`No prices are set (<code>prices</code> in the policy file), so only tokens are counted.`}
    </p>
    <h2>The last 30 days</h2>
    ${usageChart(report.days)}
    <details>
      <summary>The chart’s numbers</summary>
      ${dataTable('Tokens a day', ['Day (UTC)', 'Tokens'], days, '')}
    </details>
    ${everyone ? grouping('This month by person', 'Person', thisMonth, (r) => r.user ?? '', currency) : ''}
    ${grouping('This month by channel', 'Channel', thisMonth, (r) => r.channel, currency)}
    ${grouping('This month by model', 'Model', thisMonth, (r) => r.model, currency)}
    ${capsAndHolds(view, everyone)}`;
}

/** The rows `/usage` reads for the viewer: their workspace's (an admin's), else their own. */
export const usageQuery = (
  viewer: Viewer,
  scope: { platform: string; workspace: string },
  now: Date,
) => ({
  ...scope,
  since: reportStart(now),
  ...(viewer.admin ? {} : { user: viewer.user }),
});
