import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as echarts from 'echarts';

/** Renders an ECharts option to a PNG file on the server: ECharts' SVG renderer, then resvg. */
export async function renderChart(
  path: string,
  option: echarts.EChartsOption,
  size = { width: 800, height: 420 },
): Promise<void> {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, ...size });
  chart.setOption({ animation: false, backgroundColor: '#ffffff', ...option });
  const svg = chart.renderToSVGString();
  chart.dispose();
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, new Resvg(svg, { font: { loadSystemFonts: true } }).render().asPng());
}
