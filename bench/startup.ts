/**
 * Time to the console's first reply (`spool chat`, one line in, its answer out) against a model
 * that answers at once, from a first-ever start (an empty DATA_DIR: the embedded server is
 * initialised and migrated) and from a warm one. Side by side, round-robin in the same run: an
 * empty `node` start and an empty `tsx` start (to exit), the floor any TypeScript bot starts from.
 * `npm start` rows run the compiled dist/ (build it first: `npm run build`); one row runs the
 * source through tsx, as `npm run dev` and the tests do. RUNS=5 by default.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { REPO_ROOT, startSpool } from '../test/support/process.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess } from './lib/llm-process.ts';
import { percentile } from './lib/stats.ts';

const RUNS = Number(process.env.RUNS ?? 5);

async function toExit(args: string[]): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - start;
}

/** Milliseconds from spawn to the first reply on stdout; the process is then let exit cleanly. */
async function toFirstReply(env: Record<string, string>, built = false): Promise<number> {
  const start = performance.now();
  const spool = startSpool(['chat', '--session', 'startup'], { env, built });
  const replied = new Promise<number>((resolve) => spool.child.stdout.once('data', () => resolve(performance.now() - start)));
  spool.child.stdin.write('hi\n');
  const ms = await replied;
  spool.child.stdin.end();
  const { code, stderr } = await spool.done;
  if (code !== 0) throw new Error(`spool exited ${code}: ${stderr}`);
  return ms;
}

const llm = await startLlmProcess('echo');
const dir = await mkdtemp(join(tmpdir(), 'spool-bench-startup-'));
const scratch = await createScratchDatabase('spool_bench_startup');
const empty = join(dir, 'empty.ts');
await writeFile(empty, 'export {};\n');
const base = { OPENAI_BASE_URL: llm.baseURL };
const cases: Array<[string, (run: number) => Promise<number>]> = [
  ['empty node', () => toExit(['-e', ''])],
  ['empty tsx', () => toExit(['--import', 'tsx', empty])],
  ['npm start, embedded, first-ever start', (run) => toFirstReply({ ...base, DATA_DIR: join(dir, `fresh-${run}`) }, true)],
  ['npm start, embedded, warm start', () => toFirstReply({ ...base, DATA_DIR: join(dir, 'warm') }, true)],
  ['npm start, PostgreSQL, warm start', () => toFirstReply({ ...base, DATA_DIR: join(dir, 'pg'), DATABASE_URL: scratch.url }, true)],
  ['npm run dev (tsx), embedded, warm start', () => toFirstReply({ ...base, DATA_DIR: join(dir, 'warm') })],
];
const samples = new Map(cases.map(([name]) => [name, [] as number[]]));
try {
  // Warm-ups: the warm cases start from an initialised, migrated database.
  await toFirstReply({ ...base, DATA_DIR: join(dir, 'warm') }, true);
  await toFirstReply({ ...base, DATA_DIR: join(dir, 'pg'), DATABASE_URL: scratch.url }, true);
  for (let run = 0; run < RUNS; run++) for (const [name, measure] of cases) samples.get(name)!.push(await measure(run));
} finally {
  llm.stop();
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
}

const median = (name: string) => percentile([...samples.get(name)!].sort((a, b) => a - b), 50);
const tsx = median('empty tsx');
const goal: Record<string, number> = { 'npm start, embedded, first-ever start': 8, 'npm start, embedded, warm start': 5 };
console.log(`\nStart to first reply, median of ${RUNS} runs each, interleaved:\n`);
console.log('| start | median | min | max | × empty tsx | goal |');
console.log('|---|---|---|---|---|---|');
for (const [name] of cases) {
  const all = samples.get(name)!;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const g = goal[name] ? `≤ ${goal[name]}×: ${median(name) / tsx <= goal[name]! ? 'met' : 'MISSED'}` : '';
  console.log(`| ${name} | ${s(median(name))} | ${s(Math.min(...all))} | ${s(Math.max(...all))} | ${(median(name) / tsx).toFixed(1)}× | ${g} |`);
}

await renderChart(new URL('charts/startup.png', import.meta.url).pathname, {
  title: { text: 'Start to first reply, median (s)', left: 'center' },
  grid: { left: 250 },
  yAxis: { type: 'category', data: cases.map(([name]) => name), inverse: true },
  xAxis: { type: 'value', name: 's' },
  series: [{ type: 'bar', data: cases.map(([name]) => Number((median(name) / 1000).toFixed(2))), label: { show: true, position: 'right' } }],
});
console.log('\nchart: bench/charts/startup.png');
