/**
 * Memory of a running console bot (`spool chat`) as its stored results grow: each message makes the
 * model read one file through the official filesystem MCP server, 20 kB or 2 MB. Measured after the
 * first answer (idle, nothing big stored yet) and after MESSAGES answers (default 20): the bot's
 * RSS and, for the embedded database, its server processes, as RSS and as PSS (RSS counts the
 * shared buffers once per process; PSS shares them out). The MCP server is the same on every row
 * and is left out. Side by side: the same bot on the PostgreSQL server, whose memory is not
 * Spool's.
 * Last, a heap snapshot (which collects garbage first) gives the bot's live JavaScript heap: what
 * it holds on to, as against what its RSS kept from the peak of a turn. HEAP_SNAPSHOTS=DIR (a new
 * directory) keeps the snapshots.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { startSpool } from '../test/support/process.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess } from './lib/llm-process.ts';

const MESSAGES = Number(process.env.MESSAGES ?? 20);
/** Where to keep the bots' heap snapshots, to see what holds memory (DevTools, Retainers). */
const HEAP_SNAPSHOTS = process.env.HEAP_SNAPSHOTS;
const SIZES = [
  { label: '20 kB', chars: 20_000 },
  { label: '2 MB', chars: 2_000_000 },
];
const MCP_SERVER = join(
  process.cwd(),
  'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
);

const kB = (pid: number, file: 'status' | 'smaps_rollup', field: string) =>
  Number(
    new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/${file}`, 'utf8'),
    )?.[1] ?? 0,
  );
const parentOf = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);

/** The embedded server's postmaster and its children. */
function serverPids(dataDir: string): number[] {
  const postmaster = Number(
    readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const children = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        return parentOf(pid) === postmaster;
      } catch {
        return false; // exited while listed
      }
    });
  return [postmaster, ...children];
}

interface Sample {
  botRss: number;
  dbRss: number;
  dbPss: number;
}

async function sample(botPid: number, dataDir: string | undefined): Promise<Sample> {
  await new Promise((r) => setTimeout(r, 1_000)); // let the last turn's garbage go
  const db = dataDir ? serverPids(dataDir) : [];
  const sum = (file: 'status' | 'smaps_rollup', field: string) =>
    db.reduce((n, pid) => n + kB(pid, file, field), 0) / 1024;
  return {
    botRss: kB(botPid, 'status', 'VmRSS') / 1024,
    dbRss: sum('status', 'VmRSS'),
    dbPss: sum('smaps_rollup', 'Pss'),
  };
}

/**
 * MB of live objects in a heap snapshot taken on SIGUSR2 (node --heapsnapshot-signal) into `dir`.
 */
async function liveHeap(pid: number, dir: string): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    if (!file) continue;
    try {
      const snapshot = JSON.parse(await readFile(join(dir, file), 'utf8')) as {
        snapshot: { meta: { node_fields: string[] } };
        nodes: number[];
      };
      const fields = snapshot.snapshot.meta.node_fields;
      const at = fields.indexOf('self_size');
      let bytes = 0;
      for (let i = at; i < snapshot.nodes.length; i += fields.length) bytes += snapshot.nodes[i]!;
      return bytes / 1024 / 1024;
    } catch {
      // still being written
    }
  }
}

interface Row {
  database: string;
  size: string;
  idle: Sample;
  loaded: Sample;
  liveHeapMb: number;
}

async function measure(
  database: string,
  size: (typeof SIZES)[number],
  dir: string,
  databaseUrl?: string,
): Promise<Row> {
  const workspace = join(dir, 'workspace');
  const file = join(workspace, `${size.chars}.txt`);
  const llm = await startLlmProcess('tools', 0, [
    { name: 'fs__read_text_file', arguments: { path: file } },
  ]);
  const dataDir = join(dir, `${database}-${size.chars}`);
  const snapshots = join(HEAP_SNAPSHOTS ?? dir, `snapshot-${database}-${size.chars}`);
  await mkdir(snapshots, { recursive: true });
  const env = {
    NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}`,
    OPENAI_BASE_URL: llm.baseURL,
    DATA_DIR: dataDir,
    MCP_CONFIG: join(dir, 'mcp.json'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const spool = startSpool(['chat', '--session', `memory-${size.chars}`], {
    env,
    timeoutMs: 600_000,
  });
  let lines = 0;
  const waiters: Array<() => void> = [];
  spool.child.stdout.on('data', (d: Buffer) => {
    lines += d.toString().split('\n').length - 1;
    waiters.splice(0).forEach((w) => w());
  });
  const answered = async (n: number) => {
    while (lines < n) await new Promise<void>((r) => waiters.push(r));
  };
  try {
    spool.child.stdin.write('read the file\n');
    await answered(1);
    const idle = await sample(spool.child.pid!, databaseUrl ? undefined : dataDir);
    for (let m = 2; m <= MESSAGES; m++) {
      spool.child.stdin.write('read the file again\n');
      await answered(m);
    }
    const loaded = await sample(spool.child.pid!, databaseUrl ? undefined : dataDir);
    return {
      database,
      size: size.label,
      idle,
      loaded,
      liveHeapMb: await liveHeap(spool.child.pid!, snapshots),
    };
  } finally {
    spool.child.stdin.end();
    await spool.done;
    llm.stop();
  }
}

const dir = await mkdtemp(join(tmpdir(), 'spool-bench-memory-'));
const scratch = await createScratchDatabase('spool_bench_memory');
const rows: Row[] = [];
try {
  await mkdir(join(dir, 'workspace'));
  const line = 'a line of a large log file, the kind a tool returns when asked for everything\n';
  for (const { chars } of SIZES)
    await writeFile(
      join(dir, 'workspace', `${chars}.txt`),
      line.repeat(Math.ceil(chars / line.length)).slice(0, chars),
    );
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [MCP_SERVER, join(dir, 'workspace')] } },
    }),
  );
  for (const size of SIZES) {
    rows.push(await measure('embedded', size, dir));
    rows.push(await measure('PostgreSQL', size, dir, scratch.url));
  }
} finally {
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
}

const mb = (n: number) => `${n.toFixed(0)} MB`;
const total = (s: Sample) => s.botRss + s.dbPss;
console.log(
  `\nMemory after 1 and after ${MESSAGES} answers, each reading one file of the given size:\n`,
);
console.log(
  '| database | result size | bot RSS, idle | DB RSS / PSS, idle | bot + DB PSS, idle | bot RSS, loaded | DB RSS / PSS, loaded | bot + DB PSS, loaded | bot live JS heap, loaded |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const db = (s: Sample) =>
    r.database === 'embedded' ? `${mb(s.dbRss)} / ${mb(s.dbPss)}` : 'not Spool’s';
  console.log(
    `| ${r.database} | ${r.size} | ${mb(r.idle.botRss)} | ${db(r.idle)} | ${mb(total(r.idle))} | ${mb(r.loaded.botRss)} | ${db(r.loaded)} | ${mb(total(r.loaded))} | ${mb(r.liveHeapMb)} |`,
  );
}
const find = (database: string, size: string) =>
  rows.find((r) => r.database === database && r.size === size)!;
const idleRatio = total(find('embedded', '20 kB').idle) / find('PostgreSQL', '20 kB').idle.botRss;
console.log(
  `\nIdle, embedded (bot + database PSS) / bot on PostgreSQL: ${idleRatio.toFixed(2)}× (goal ≤ 1.3×: ${idleRatio <= 1.3 ? 'met' : 'MISSED'})`,
);
/** A loaded figure with 2 MB results against the same with 20 kB results, and its goal. */
const growth = (database: string, what: string, of: (r: Row) => number, goal: number) => {
  const ratio = of(find(database, '2 MB')) / of(find(database, '20 kB'));
  console.log(
    `${database}, ${what} with 2 MB results / with 20 kB results: ${ratio.toFixed(2)}× (goal ≤ ${goal}×: ${ratio <= goal ? 'met' : 'MISSED'})`,
  );
};
for (const database of ['embedded', 'PostgreSQL']) {
  growth(database, 'bot RSS', (r) => r.loaded.botRss, 1.3);
  if (database === 'embedded') growth(database, 'bot + DB PSS', (r) => total(r.loaded), 1.3);
  growth(database, 'live JS heap', (r) => r.liveHeapMb, 1.2);
}

await renderChart(new URL('charts/memory.png', import.meta.url).pathname, {
  title: {
    text: `Memory after ${MESSAGES} answers (MB): bot RSS + embedded database PSS`,
    left: 'center',
  },
  legend: { top: 30 },
  grid: { top: 70 },
  xAxis: { type: 'category', data: rows.map((r) => `${r.database}, ${r.size}`) },
  yAxis: { type: 'value', name: 'MB' },
  series: [
    {
      name: 'bot RSS',
      type: 'bar',
      stack: 'm',
      data: rows.map((r) => Math.round(r.loaded.botRss)),
    },
    {
      name: 'database PSS',
      type: 'bar',
      stack: 'm',
      data: rows.map((r) => Math.round(r.loaded.dbPss)),
    },
  ],
});
console.log('\nchart: bench/charts/memory.png');
