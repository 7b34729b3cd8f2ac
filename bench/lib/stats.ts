import { performance } from 'node:perf_hooks';

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface Timing {
  median: number;
  p95: number;
  p99: number;
}

/** Times `runs` calls of `fn` after one warm-up call, in milliseconds. */
export async function time(runs: number, fn: () => Promise<unknown>): Promise<Timing> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return timingOf(samples);
}

export function timingOf(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
  };
}

export const ms = (n: number) => `${n.toFixed(1)} ms`;
