/**
 * 200 threads at once through the Slack HTTP path: signed Events API requests to a real bot
 * process, a model that takes 300 ms per call (in a process of its own), a fake Slack Web API here.
 * Each thread's messages follow one another as a person types them (the next is sent when the
 * previous is acknowledged); all threads at once. Side by side in the same run: the floor bot
 * (bench/lib/floor-bot.ts), the same path with nothing durable behind it, and the durable floor
 * (bench/lib/durable-floor-bot.ts), the same path with an inbox in raw `pg` and nothing else.
 *
 * Spool and the durable floor run on scratch databases of their own on the PostgreSQL server at
 * SPOOL_TEST_POSTGRES_URL (default: the local test server) and on an embedded server each. THREADS=200 by default. LEASE_TTL_MS sets Spool's lease. PROFILE=1 also
 * profiles each Spool run's CPU (node --cpu-prof) and prints its self time by package, and the
 * burst's CPU a turn by what it served, Spool's beside the durable floor's (profiled the same way).
 *
 * CPU per turn counts every process of each side: the bot and whatever it started (the embedded
 * server and its backends), and on the PostgreSQL server the backends serving the bot's database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { BOT_USER, eventBody, FakeSlack } from '../test/support/fake-slack.ts';
import { startEmbeddedPostgres } from '../src/store/embedded-postgres.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { freePort } from '../test/support/process.ts';
import { deliver, SIGNING_SECRET, startSlackBot } from '../test/support/slack-bot.ts';
import { renderChart } from './lib/chart.ts';
import { startLlmProcess } from './lib/llm-process.ts';
import { builtinsByCaller, cpuByPart, profileByOwner, topFunctions } from './lib/profile.ts';
import { percentile } from './lib/stats.ts';

const THREADS = Number(process.env.THREADS ?? 200);
const LLM_MS = 300;
const PROFILE = process.env.PROFILE === '1';
/** LEASE_TTL_MS, when set, is handed to the Spool bots (a short lease shows work redone sooner). */
const LEASE: Record<string, string> = process.env.LEASE_TTL_MS
  ? { LEASE_TTL_MS: process.env.LEASE_TTL_MS }
  : {};
/**
 * WEB_PAGES_AB=1: Spool on PostgreSQL alone beside the floor, with its web pages on (PUBLIC_URL
 * set, so replies are given their results' links, as on a platform) and off (WEB_PAGES=false),
 * alternating on, off, off, on twice: what the pages add to a turn's own work. The chart is left.
 */
const PAGES_AB = process.env.WEB_PAGES_AB === '1';
const PAGES_ON = 'Spool, pages on, PostgreSQL';
const PAGES_OFF = 'Spool, pages off, PostgreSQL';

interface Outcome {
  bot: string;
  messages: number;
  totalMs: number;
  p95Ms: number;
  ackP95Ms: number;
  ackP99Ms: number;
  inOrder: boolean;
  cpuMsPerTurn: number;
  /** Of which the database's processes. */
  dbCpuMsPerTurn: number;
  /**
   * Web API calls per turn besides chat.postMessage, and new TCP connections per turn to Slack and
   * to the model.
   */
  otherSlackCalls: number;
  connections: number;
  /**
   * Transactions committed per turn in the bot's database (PostgreSQL only: the server counts
   * them).
   */
  transactions?: number;
  /**
   * Spool only: model requests the bot logged as aborted ("Request was aborted": paid for and
   * thrown away), and what `spool_redone_total` counted (model requests and tool calls started
   * again for the same step; none on a build without the metric).
   */
  aborted?: number;
  redone?: number;
  /** When the burst ran, in µs of the monotonic clock (as a CPU profile's samples are timed). */
  burstUs: [number, number];
}

/** The monotonic clock in µs, the clock of `node --cpu-prof`'s samples in every process. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The sum of `spool_redone_total` on the bot's /metrics; undefined where it has no such metric. */
async function redoneOf(port: number): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  if (!text.includes('spool_redone_total')) return undefined;
  return text
    .split('\n')
    .filter((line) => line.startsWith('spool_redone_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/**
 * /proc/PID/stat after the command name: [0] state, [1] ppid, [11..14] utime, stime, cutime,
 * cstime.
 */
function stat(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return undefined; // gone
  }
}

/**
 * CPU time in ms (clock ticks of 10 ms) of a process and, through cutime/cstime, its reaped
 * children.
 */
const cpuOf = (pid: number) =>
  (stat(pid)
    ?.slice(11, 15)
    .reduce((sum, ticks) => sum + Number(ticks), 0) ?? 0) * 10;

/** A process and every process below it. */
function tree(root: number): number[] {
  const parents = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => [Number(d), Number(stat(Number(d))?.[1])] as const);
  const pids = [root];
  for (let i = 0; i < pids.length; i++)
    for (const [pid, ppid] of parents) if (ppid === pids[i]) pids.push(pid);
  return pids;
}

/** A connection to the bench's scratch database on the PostgreSQL server, for its statistics. */
interface Scratch {
  query<T>(sql: string): Promise<T[]>;
}

/**
 * The pids of the PostgreSQL backends serving the scratch database, but for the statistics
 * connection itself.
 */
async function backends(scratch: Scratch): Promise<number[]> {
  const rows = await scratch.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows.map((r) => r.pid);
}

/**
 * Transactions the bot's database committed. A backend reports its counts when it goes idle, but
 * not more often than once a second, and those held back reach the view once it has been idle for
 * 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL): read after a burst, the count waits out that time, or
 * the burst's last second is missing from it.
 */
async function committed(scratch: Scratch): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const [row] = await scratch.query<{ n: string }>(
    'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(row!.n);
}

/** The runs driven so far. */
let runs = 0;

/** CPU of each process now, so that a later reading counts only what was spent in between. */
const cpuByPid = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuOf(pid)]));
const spentSince = (before: Map<number, number>, pids: number[]) =>
  pids.reduce((sum, pid) => sum + cpuOf(pid) - (before.get(pid) ?? 0), 0);

/**
 * The embedded server's processes: its postmaster (the first line of postmaster.pid) and every
 * backend below it.
 */
const embeddedPids = (dataDir: string) => async () =>
  tree(Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]));

async function drive(
  bot: string,
  pid: number,
  port: number,
  slack: FakeSlack,
  messages: number,
  db?: { pids(): Promise<number[]>; scratch?: Scratch },
): Promise<Outcome> {
  const sentAt = new Map<string, number>();
  const acks: number[] = [];
  const scratch = db?.scratch;
  const dbPids = async () => (await db?.pids()) ?? [];
  const botBefore = cpuByPid([pid]);
  const dbBefore = cpuByPid(await dbPids());
  const connectionsBefore = slack.connections + (await llm.connections());
  const slackCallsBefore = slack.calls.length;
  const transactionsBefore = scratch && (await committed(scratch));
  // A channel per run: the runs share a database and thread ids.
  const channel = `CLOAD${++runs}`;
  const start = Date.now();
  const burstFrom = monotonicUs();
  await Promise.all(
    Array.from({ length: THREADS }, async (_, t) => {
      const thread = `${5000 + t}.1`;
      for (let m = 1; m <= messages; m++) {
        const text = `t${t} m${m}`;
        const body =
          m === 1
            ? eventBody({
                type: 'app_mention',
                user: 'U1',
                text: `<@${BOT_USER}> ${text}`,
                ts: thread,
                channel,
              })
            : eventBody({
                type: 'message',
                channel_type: 'channel',
                user: 'U1',
                text,
                ts: `${5000 + t}.${m}`,
                thread_ts: thread,
                channel,
              });
        const sent = Date.now();
        sentAt.set(text, sent);
        if (!(await deliver(port, body))) throw new Error(`${bot}: ${text} was not acknowledged`);
        acks.push(Date.now() - sent);
      }
    }),
  );
  const posts = () => slack.calls.filter((c) => c.method === 'chat.postMessage');
  await slack.waitFor(() => posts().length >= THREADS * messages, 600_000);
  const burstUs: [number, number] = [burstFrom, monotonicUs()];
  const totalMs = Math.max(...posts().map((c) => c.at)) - start;
  const turns = THREADS * messages;
  const dbCpu = spentSince(dbBefore, await dbPids());
  const cpu = spentSince(botBefore, [pid]) + dbCpu;
  const connections = slack.connections + (await llm.connections()) - connectionsBefore;
  const otherSlackCalls = slack.calls
    .slice(slackCallsBefore)
    .filter((c) => c.method !== 'chat.postMessage').length;
  const latencies = posts()
    .map((c) => c.at - sentAt.get(/answer to (t\d+ m\d+)/.exec(String(c.args.text))![1]!)!)
    .sort((a, b) => a - b);
  const byThread = new Map<string, string[]>();
  for (const c of posts())
    byThread.set(String(c.args.thread_ts), [
      ...(byThread.get(String(c.args.thread_ts)) ?? []),
      /m\d+/.exec(String(c.args.text))![0],
    ]);
  const expected = JSON.stringify(Array.from({ length: messages }, (_, m) => `m${m + 1}`));
  acks.sort((a, b) => a - b);
  return {
    bot,
    messages,
    totalMs,
    p95Ms: percentile(latencies, 95),
    ackP95Ms: percentile(acks, 95),
    ackP99Ms: percentile(acks, 99),
    inOrder:
      posts().length === turns &&
      [...byThread.values()].every((v) => JSON.stringify(v) === expected),
    cpuMsPerTurn: cpu / turns,
    dbCpuMsPerTurn: dbCpu / turns,
    otherSlackCalls: otherSlackCalls / turns,
    connections: connections / turns,
    transactions: scratch && ((await committed(scratch)) - transactionsBefore!) / turns,
    burstUs,
  };
}

/** A floor bot (`lib/NAME.ts`), started once it answers Slack's url_verification. */
async function floorBot(
  name: 'floor-bot' | 'durable-floor-bot',
  port: number,
  llmUrl: string,
  slackUrl: string,
  databaseUrl?: string,
  nodeArgs: string[] = [],
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      '--import',
      'tsx',
      fileURLToPath(new URL(`lib/${name}.ts`, import.meta.url)),
      String(port),
      llmUrl,
      slackUrl,
      SIGNING_SECRET,
      ...(databaseUrl ? [databaseUrl] : []),
    ],
    {
      stdio: 'inherit',
    },
  );
  while (!(await deliver(port, { type: 'url_verification', challenge: 'ready', token: 't' })))
    await new Promise((r) => setTimeout(r, 100));
  return child;
}

const llm = await startLlmProcess('echo', LLM_MS);
const dir = await mkdtemp(join(tmpdir(), 'spool-bench-'));
/** A scratch database on the PostgreSQL server, with a connection for its statistics. */
async function scratchWithStats(prefix: string) {
  const database = await createScratchDatabase(prefix);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const stats: Scratch = { query: async <T>(sql: string) => (await client.query(sql)).rows as T[] };
  return {
    url: database.url,
    stats,
    async drop() {
      await client.end();
      await database.drop();
    },
  };
}
const scratch = await scratchWithStats('spool_bench_concurrency');
const durableScratch = await scratchWithStats('spool_bench_durable_floor');
const durableEmbedded = await startEmbeddedPostgres(join(dir, 'durable-embedded'));
const outcomes: Outcome[] = [];
const profileDir = (name: string, messages: number) => join(dir, `profile-${name}-${messages}`);
const profiles: string[] = [];

/**
 * The burst's CPU a turn by what it served, Spool's (profiled in `spoolProfile`) beside the
 * durable floor's on the same database, which ran just before it: a Markdown table.
 */
function burstParts(name: string, messages: number, spoolProfile: string): string {
  const database = name.endsWith('embedded') ? 'embedded' : 'pg';
  const run = (bot: string) => outcomes.find((o) => o.bot === bot && o.messages === messages)!;
  const turns = THREADS * messages;
  const perTurn = (dir: string, [from, to]: [number, number]) =>
    new Map([...cpuByPart(dir, from, to)].map(([part, ms]) => [part, ms / turns]));
  const spool = perTurn(spoolProfile, run(name).burstUs);
  const floor = perTurn(
    profileDir(`durable-${database}`, messages),
    run(name.replace('Spool', 'durable floor')).burstUs,
  );
  const parts = [...new Set([...spool.keys(), ...floor.keys()])].sort(
    (a, b) => (spool.get(b) ?? 0) - (spool.get(a) ?? 0),
  );
  const ms = (v: number | undefined) => (v === undefined ? '–' : `${v.toFixed(2)} ms`);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return `\nThe burst's CPU a turn in the bot's process (the profiler's samples while it ran), by what it served, ${name} beside the durable floor, ${THREADS} × ${messages}:\n\n| part | Spool | durable floor |\n|---|---|---|\n${parts
    .map((part) => `| ${part} | ${ms(spool.get(part))} | ${ms(floor.get(part))} |`)
    .join('\n')}\n| all | ${ms(sum(spool))} | ${ms(sum(floor))} |`;
}
try {
  for (const messages of [1, 3]) {
    const profiled = (name: string) =>
      PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(name, messages)}`] : [];
    type Start = (port: number, slack: FakeSlack) => Promise<ChildProcess>;
    /** Spool on the database `database` names (its profiles under that name), with `env`. */
    const spool =
      (database: 'pg' | 'embedded', env: Record<string, string> = {}): Start =>
      async (port, slack) =>
        (
          await startSlackBot(
            port,
            {
              OPENAI_BASE_URL: llm.baseURL,
              SLACK_API_URL: slack.apiUrl,
              ...LEASE,
              DATA_DIR: join(dir, database),
              ...(database === 'pg' ? { DATABASE_URL: scratch.url } : {}),
              ...env,
            },
            { nodeArgs: profiled(database) },
          )
        ).child;
    const floor: [string, Start] = [
      'floor',
      (port, slack) => floorBot('floor-bot', port, llm.baseURL, slack.apiUrl),
    ];
    const pagesOn: [string, Start] = [
      PAGES_ON,
      spool('pg', { WEB_PAGES: 'true', PUBLIC_URL: 'https://spool.bench.test' }),
    ];
    const pagesOff: [string, Start] = [PAGES_OFF, spool('pg', { WEB_PAGES: 'false' })];
    const abRuns = [pagesOn, pagesOff, pagesOff, pagesOn, pagesOn, pagesOff, pagesOff, pagesOn];
    const bots: Array<[string, Start]> = PAGES_AB
      ? [floor, ...abRuns]
      : [
          floor,
          [
            'durable floor, PostgreSQL',
            (port, slack) =>
              floorBot(
                'durable-floor-bot',
                port,
                llm.baseURL,
                slack.apiUrl,
                durableScratch.url,
                profiled('durable-pg'),
              ),
          ],
          ['Spool, PostgreSQL', spool('pg')],
          [
            'durable floor, embedded',
            (port, slack) =>
              floorBot(
                'durable-floor-bot',
                port,
                llm.baseURL,
                slack.apiUrl,
                durableEmbedded.url,
                profiled('durable-embedded'),
              ),
          ],
          ['Spool, embedded', spool('embedded')],
        ];
    for (const [name, start] of bots) {
      const slack = await new FakeSlack().start();
      const port = await freePort();
      const child = await start(port, slack);
      let aborted = 0;
      child.stderr?.on(
        'data',
        (d: Buffer) => (aborted += d.toString().split('Request was aborted').length - 1),
      );
      try {
        const durable = name.startsWith('durable');
        const server = durable ? durableScratch : scratch;
        const db = name.endsWith('PostgreSQL')
          ? { pids: () => backends(server.stats), scratch: server.stats }
          : name.endsWith('embedded')
            ? { pids: embeddedPids(join(dir, durable ? 'durable-embedded' : 'embedded')) }
            : undefined;
        const outcome = await drive(name, child.pid!, port, slack, messages, db);
        outcomes.push(
          name.startsWith('Spool')
            ? { ...outcome, aborted, redone: await redoneOf(port) }
            : outcome,
        );
      } finally {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
        await slack.stop();
      }
      console.error(`done: ${name}, ${THREADS} × ${messages}`);
      if (PROFILE && name.startsWith('Spool')) {
        const profile = profileDir(name.endsWith('embedded') ? 'embedded' : 'pg', messages);
        profiles.push(
          `\nCPU self time of ${name}, ${THREADS} × ${messages} (whole process life, start-up included):\n\n| code | self time | share |\n|---|---|---|\n${profileByOwner(profile).join('\n')}`,
        );
        profiles.push(
          `\nThe functions with the most self time:\n\n| function | called from | self time |\n|---|---|---|\n${topFunctions(profile).join('\n')}`,
        );
        profiles.push(
          `\nNode's and V8's own work, by the package that asked for it:\n\n| package | self time |\n|---|---|\n${builtinsByCaller(profile).join('\n')}`,
        );
        profiles.push(burstParts(name, messages, profile));
      }
    }
  }
} finally {
  llm.stop();
  await scratch.drop();
  await durableScratch.drop();
  await durableEmbedded.stop();
  await rm(dir, { recursive: true, force: true });
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`\n${THREADS} threads at once, model ${LLM_MS} ms per call, Slack HTTP path:\n`);
console.log(
  '| bot | messages per thread | total | total / floor | total / durable floor | reply p95 | ack p95 | ack p99 | CPU per turn (of it, database) | CPU / floor | CPU / durable floor | every thread in order |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
const ratio = (of: number, to: number | undefined, digits: number) =>
  to === undefined ? '–' : `${(of / to).toFixed(digits)}x`;
for (const o of outcomes) {
  const same = (bot: string) => outcomes.find((f) => f.bot === bot && f.messages === o.messages);
  const floor = same('floor')!;
  // Spool beside the durable floor on the same kind of database.
  const durable = o.bot.startsWith('Spool')
    ? same(o.bot.replace('Spool', 'durable floor'))
    : undefined;
  const db = o.bot === 'floor' ? '' : ` (${o.dbCpuMsPerTurn.toFixed(1)} ms)`;
  console.log(
    `| ${o.bot} | ${o.messages} | ${s(o.totalMs)} | ${ratio(o.totalMs, floor.totalMs, 2)} | ${ratio(o.totalMs, durable?.totalMs, 2)} | ${s(o.p95Ms)} | ${o.ackP95Ms} ms | ${o.ackP99Ms} ms | ${o.cpuMsPerTurn.toFixed(1)} ms${db} | ${ratio(o.cpuMsPerTurn, floor.cpuMsPerTurn, 1)} | ${ratio(o.cpuMsPerTurn, durable?.cpuMsPerTurn, 2)} | ${o.inOrder ? 'yes' : 'NO'} |`,
  );
}
console.log(
  '\nPer turn: Slack Web API calls besides chat.postMessage, new TCP connections to Slack and the model, and database transactions:\n',
);
console.log('| bot | messages per thread | other Slack calls | new connections | transactions |');
console.log('|---|---|---|---|---|');
for (const o of outcomes)
  console.log(
    `| ${o.bot} | ${o.messages} | ${o.otherSlackCalls.toFixed(2)} | ${o.connections.toFixed(2)} | ${o.transactions?.toFixed(1) ?? '–'} |`,
  );

console.log(
  '\nRedone work: model requests logged as aborted, and `spool_redone_total` (model requests and tool calls started again):\n',
);
console.log('| bot | messages per thread | aborted requests | redone |');
console.log('|---|---|---|---|');
for (const o of outcomes)
  if (o.aborted !== undefined)
    console.log(`| ${o.bot} | ${o.messages} | ${o.aborted} | ${o.redone ?? '–'} |`);

for (const table of profiles) console.log(table);

if (PAGES_AB) {
  console.log("\nWeb pages on and off, each side's runs: median (min–max):\n");
  console.log('| bot | messages per thread | runs | total | reply p95 | CPU per turn |');
  console.log('|---|---|---|---|---|---|');
  const spread = (values: number[], shown: (v: number) => string) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${shown(percentile(sorted, 50))} (${shown(sorted[0]!)}–${shown(sorted.at(-1)!)})`;
  };
  for (const messages of [1, 3])
    for (const bot of [PAGES_ON, PAGES_OFF]) {
      const runs = outcomes.filter((o) => o.bot === bot && o.messages === messages);
      const ms = (v: number) => `${v.toFixed(1)} ms`;
      console.log(
        `| ${bot} | ${messages} | ${runs.length} | ${spread(
          runs.map((o) => o.totalMs),
          s,
        )} | ${spread(
          runs.map((o) => o.p95Ms),
          s,
        )} | ${spread(
          runs.map((o) => o.cpuMsPerTurn),
          ms,
        )} |`,
      );
    }
  process.exit(0);
}

const names = [...new Set(outcomes.map((o) => o.bot))];
await renderChart(new URL('charts/concurrency.png', import.meta.url).pathname, {
  title: { text: `${THREADS} threads at once: total time (s)`, left: 'center' },
  legend: { top: 30 },
  grid: { top: 70 },
  xAxis: { type: 'category', data: ['1 message per thread', '3 messages per thread'] },
  yAxis: { type: 'value', name: 's' },
  series: names.map((name) => ({
    name,
    type: 'bar',
    data: [1, 3].map((m) =>
      Number((outcomes.find((o) => o.bot === name && o.messages === m)!.totalMs / 1000).toFixed(2)),
    ),
  })),
});
console.log('\nchart: bench/charts/concurrency.png');
