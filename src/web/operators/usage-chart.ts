import type { UsageReport } from '../../core/ports/spend.ts';
import { html, type Html } from '../html.ts';

const WIDTH = 720;
const HEIGHT = 220;
/** Room for the axis' numbers on the left and the days below. */
const LEFT = 72;
const BELOW = 24;
const ABOVE = 8;

/**
 * Tokens a day as bars, inline SVG built by the page's own escaping template: presentation
 * attributes only, since the pages' CSP allows no style attribute or element (an ECharts SVG
 * carries both), and no script. Each bar says its day and tokens (`<title>`); the numbers are also
 * the table beside it.
 */
export function usageChart(days: UsageReport['days']): Html {
  const most = Math.max(1, ...days.map((d) => d.tokens));
  const step = (WIDTH - LEFT) / Math.max(1, days.length);
  const tall = HEIGHT - ABOVE - BELOW;
  const bars = days.map((d, i) => {
    const h = (d.tokens / most) * tall;
    const x = LEFT + i * step;
    return html`<rect
        x="${x.toFixed(1)}"
        y="${(ABOVE + tall - h).toFixed(1)}"
        width="${(step * 0.8).toFixed(1)}"
        height="${h.toFixed(1)}"
        fill="#0b5cad"
        ><title>${d.day}: ${d.tokens.toLocaleString('en-US')} tokens</title></rect
      >${
        i % 5 === 0
          ? html`<text x="${x.toFixed(1)}" y="${HEIGHT - 6}" font-size="11" fill="#55565c"
              >${d.day.slice(5)}</text
            >`
          : ''
      }`;
  });
  const peak = days.reduce((a, b) => (b.tokens > a.tokens ? b : a), days[0]!);
  const label = `Tokens a day, the last ${days.length} days (UTC); the most, ${peak.tokens.toLocaleString('en-US')}, on ${peak.day}.`;
  return html`<svg
    class="chart"
    role="img"
    aria-label="${label}"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    width="${WIDTH}"
    height="${HEIGHT}"
  >
    <line
      x1="${LEFT - 4}"
      y1="${ABOVE + tall}"
      x2="${WIDTH}"
      y2="${ABOVE + tall}"
      stroke="#d4d5da"
    />
    <text x="${LEFT - 8}" y="${ABOVE + 10}" font-size="11" text-anchor="end" fill="#55565c">
      ${most.toLocaleString('en-US')}
    </text>
    <text x="${LEFT - 8}" y="${ABOVE + tall}" font-size="11" text-anchor="end" fill="#55565c">
      0
    </text>
    ${bars}
  </svg>`;
}
