import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type * as echarts from 'echarts';
import { chartPng } from '../../src/adapters/shared/chart.ts';

/** Renders an ECharts option to a PNG file, as `/usage` renders its chart. */
export async function renderChart(
  path: string,
  option: echarts.EChartsOption,
  size = { width: 800, height: 420 },
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, chartPng(option, size));
}
