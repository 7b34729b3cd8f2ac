import { Resvg } from '@resvg/resvg-js';
import * as echarts from 'echarts';
import type { UsageReport } from '../../core/ports/spend.ts';

/** An ECharts option as a PNG, rendered on the server: ECharts' SVG renderer, then resvg. */
export function chartPng(
  option: echarts.EChartsOption,
  size = { width: 800, height: 420 },
): Buffer {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, ...size });
  chart.setOption({ animation: false, backgroundColor: '#ffffff', ...option });
  const svg = chart.renderToSVGString();
  chart.dispose();
  return new Resvg(svg, { font: { loadSystemFonts: true } }).render().asPng();
}

/** `/usage`'s chart: tokens a day over the last 30 days, and the spend where prices are set. */
export function usageChartPng(days: UsageReport['days'], currency?: string): Buffer {
  return chartPng(
    {
      title: {
        text: 'Usage, last 30 days (UTC)',
        left: 'center',
        top: 4,
        textStyle: { fontSize: 16 },
      },
      legend: { top: 34 },
      grid: { top: 76, left: 80, right: currency ? 80 : 30, bottom: 50 },
      xAxis: { type: 'category', data: days.map((d) => d.day.slice(5)) },
      yAxis: [
        { type: 'value', name: 'tokens' },
        ...(currency ? [{ type: 'value' as const, name: currency }] : []),
      ],
      series: [
        { name: 'tokens', type: 'bar', data: days.map((d) => d.tokens) },
        ...(currency
          ? [
              {
                name: currency,
                type: 'line' as const,
                yAxisIndex: 1,
                data: days.map((d) => Number(d.cost.toFixed(4))),
              },
            ]
          : []),
      ],
    },
    { width: 800, height: 360 },
  );
}
