/**
 * Time to the console's first reply (`spool chat`, one line in, its answer out) against a model
 * that answers at once, from a first-ever start (an empty DATA_DIR: the embedded server is
 * initialised and migrated) and from a warm one. Each is divided by an empty start of the same
 * kind, launched the same way, measured round-robin in the same run:
 * - `node dist/start.js` (build it first: `npm run build`) against `node` running an empty file;
 * - `npm start`, as users start it, against `npm start` in a package whose start script runs an
 *   empty file with the same node flags;
 * - the source through tsx (`npm run dev`, the tests) against tsx running an empty file.
 * RUNS=5 by default.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { REPO_ROOT } from '../test/support/process.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess } from './lib/llm-process.ts';
import { percentile } from './lib/stats.ts';

const RUNS = Number(process.env.RUNS ?? 5);

/** How a start is launched: a command, its arguments before Spool's, and where. */
interface Launch {
  command: string;
  args: string[];
  cwd: string;
}

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  ...extra,
});

async function toExit({ command, args, cwd }: Launch): Promise<number> {
  const start = performance.now();
  const child = spawn(command, args, { cwd, env: env(), stdio: 'ignore' });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${String(code)}`);
  return performance.now() - start;
}

/**
 * Where a start's time went, in milliseconds from its spawn: the embedded server ready (its pid
 * file's last write, the "ready" line), the database open (the "Database:" line: the modules
 * loaded, the server ready, the migrations checked), the first reply.
 */
interface Marks {
  serverReady?: number;
  databaseOpen?: number;
  reply: number;
}
const breakdowns = new Map<string, Marks[]>();

/** Milliseconds from spawn to the first reply on stdout; the process is then let exit cleanly. */
async function toFirstReply(
  { command, args, cwd }: Launch,
  extra: Record<string, string>,
  name?: string,
): Promise<number> {
  const start = performance.now();
  const wallStart = Date.now();
  const child = spawn(command, [...args, 'chat', '--session', 'startup'], { cwd, env: env(extra) });
  let stderr = '';
  let databaseOpen: number | undefined;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (databaseOpen === undefined && stderr.includes('Database:'))
      databaseOpen = performance.now() - start;
  });
  const replied = new Promise<number>((resolve) =>
    child.stdout.once('data', () => resolve(performance.now() - start)),
  );
  child.stdin.write('hi\n');
  const ms = await replied;
  const serverReady = extra.DATABASE_URL
    ? undefined
    : (await stat(join(extra.DATA_DIR!, 'postgres', 'postmaster.pid'))).mtimeMs - wallStart;
  child.stdin.end();
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`spool exited ${String(code)}: ${stderr}`);
  if (name)
    breakdowns.set(name, [
      ...(breakdowns.get(name) ?? []),
      { serverReady, databaseOpen, reply: ms },
    ]);
  return ms;
}

const llm = await startLlmProcess('echo');
const dir = await mkdtemp(join(tmpdir(), 'spool-bench-startup-'));
const scratch = await createScratchDatabase('spool_bench_startup');
// The empty starts: a JavaScript file, a TypeScript one, and a package whose start script runs the
// first.
const emptyPackage = join(dir, 'empty');
await mkdir(emptyPackage);
await writeFile(join(emptyPackage, 'main.js'), 'export {};\n');
await writeFile(join(dir, 'empty.ts'), 'export {};\n');
await writeFile(
  join(emptyPackage, 'package.json'),
  JSON.stringify({
    name: 'empty',
    type: 'module',
    scripts: { start: 'node main.js' },
  }),
);

const node: Launch = {
  command: process.execPath,
  args: ['dist/start.js'],
  cwd: REPO_ROOT,
};
const npm: Launch = { command: 'npm', args: ['--silent', 'start', '--'], cwd: REPO_ROOT };
const tsx: Launch = {
  command: process.execPath,
  args: ['--import', 'tsx', 'src/main.ts'],
  cwd: REPO_ROOT,
};
const base = { OPENAI_BASE_URL: llm.baseURL };
const embedded = (name: string) => ({ ...base, DATA_DIR: join(dir, name) });
const postgres = { ...base, DATA_DIR: join(dir, 'pg'), DATABASE_URL: scratch.url };

/**
 * Each row: its name, the empty start it is divided by (none for the empty starts), and how to time
 * it.
 */
const cases: Array<[string, string | undefined, (run: number) => Promise<number>]> = [
  [
    'empty node',
    undefined,
    () =>
      toExit({
        command: process.execPath,
        args: ['main.js'],
        cwd: emptyPackage,
      }),
  ],
  [
    'node dist/start.js, embedded, first-ever start',
    'empty node',
    (run) =>
      toFirstReply(
        node,
        embedded(`node-fresh-${run}`),
        'node dist/start.js, embedded, first-ever start',
      ),
  ],
  [
    'node dist/start.js, embedded, warm start',
    'empty node',
    () => toFirstReply(node, embedded('warm'), 'node dist/start.js, embedded, warm start'),
  ],
  ['node dist/start.js, PostgreSQL, warm start', 'empty node', () => toFirstReply(node, postgres)],
  [
    'empty npm start',
    undefined,
    () => toExit({ command: 'npm', args: ['--silent', 'start'], cwd: emptyPackage }),
  ],
  [
    'npm start, embedded, first-ever start',
    'empty npm start',
    (run) =>
      toFirstReply(npm, embedded(`npm-fresh-${run}`), 'npm start, embedded, first-ever start'),
  ],
  [
    'npm start, embedded, warm start',
    'empty npm start',
    () => toFirstReply(npm, embedded('warm'), 'npm start, embedded, warm start'),
  ],
  [
    'empty tsx',
    undefined,
    () =>
      toExit({
        command: process.execPath,
        args: ['--import', 'tsx', join(dir, 'empty.ts')],
        cwd: REPO_ROOT,
      }),
  ],
  ['tsx src/main.ts, embedded, warm start', 'empty tsx', () => toFirstReply(tsx, embedded('warm'))],
];
const samples = new Map(cases.map(([name]) => [name, [] as number[]]));
try {
  // Warm-ups: the warm cases start from an initialised, migrated database.
  await toFirstReply(node, embedded('warm'));
  await toFirstReply(node, postgres);
  for (let run = 0; run < RUNS; run++)
    for (const [name, , measure] of cases) samples.get(name)!.push(await measure(run));
} finally {
  llm.stop();
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
}

const median = (name: string) =>
  percentile(
    [...samples.get(name)!].sort((a, b) => a - b),
    50,
  );
// Issue 46's goals (wave 5; were 8× and 5×).
const goalOf = (name: string) =>
  name.includes('first-ever') ? 6 : name.includes('embedded, warm') ? 4 : undefined;
console.log(`\nStart to first reply, median of ${RUNS} runs each, interleaved:\n`);
console.log('| start | median | min | max | × the empty start of its kind | goal |');
console.log('|---|---|---|---|---|---|');
for (const [name, kind] of cases) {
  const all = samples.get(name)!;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const ratio = kind ? median(name) / median(kind) : undefined;
  const goal = goalOf(name);
  const g = ratio !== undefined && goal ? `≤ ${goal}×: ${ratio <= goal ? 'met' : 'MISSED'}` : '';
  console.log(
    `| ${name} | ${s(median(name))} | ${s(Math.min(...all))} | ${s(Math.max(...all))} | ${ratio === undefined ? '' : `${ratio.toFixed(1)}× ${kind}`} | ${g} |`,
  );
}

const ms = (values: Array<number | undefined>) => {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  return known.length ? `${Math.round(percentile(known, 50))} ms` : '';
};
console.log(
  '\nWhere the time goes, medians from the spawn: the server ready (its pid file says so), the database open ("Database:": modules loaded, migrations checked), the first reply:\n',
);
console.log('| start | server ready | database open | first reply |');
console.log('|---|---|---|---|');
for (const [name, marks] of breakdowns)
  console.log(
    `| ${name} | ${ms(marks.map((m) => m.serverReady))} | ${ms(marks.map((m) => m.databaseOpen))} | ${ms(marks.map((m) => m.reply))} |`,
  );

await renderChart(new URL('charts/startup.png', import.meta.url).pathname, {
  title: { text: 'Start to first reply, median (s)', left: 'center' },
  grid: { left: 250 },
  yAxis: { type: 'category', data: cases.map(([name]) => name), inverse: true },
  xAxis: { type: 'value', name: 's' },
  series: [
    {
      type: 'bar',
      data: cases.map(([name]) => Number((median(name) / 1000).toFixed(2))),
      label: { show: true, position: 'right' },
    },
  ],
});
console.log('\nchart: bench/charts/startup.png');
