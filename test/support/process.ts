import {
  execFileSync,
  spawn,
  type ChildProcess,
  type ChildProcessWithoutNullStreams,
} from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SpoolProcess {
  child: ChildProcessWithoutNullStreams;
  /** Settles when the process exits. */
  done: Promise<RunResult>;
}

/**
 * How Spool is started: `npm start` runs the compiled `dist/start.js`, which the run compiles from
 * the source as it is now (test/support/build.ts); `npm run dev` runs `src/main.ts` through tsx.
 */
export const SPOOL_ENTRY = {
  built: ['dist/start.js'],
  source: ['--import', 'tsx', 'src/main.ts'],
};

/**
 * Starts Spool with only the given environment, as `npm start` does, or with `source` as
 * `npm run dev` does.
 */
export function startSpool(
  args: string[],
  options: {
    env: Record<string, string>;
    timeoutMs?: number;
    nodeArgs?: string[];
    source?: boolean;
    group?: boolean;
  },
): SpoolProcess {
  const entry = options.source ? SPOOL_ENTRY.source : SPOOL_ENTRY.built;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    // A process group of its own, to be killed whole as a supervisor kills a container.
    detached: options.group ?? false,
  });
  let stdout = '';
  let stderr = '';
  let both = '';
  child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), (both += d.toString())));
  child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), (both += d.toString())));
  startedHere.push({ command: `spool ${args.join(' ')} (pid ${child.pid})`, output: () => both });
  const done = new Promise<RunResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `spool did not exit within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

/** The Spool processes this test file started, for what they said when a test fails. */
const startedHere: Array<{ command: string; output: () => string }> = [];

/**
 * The last lines each Spool process of this file wrote, stdout and stderr as they came: printed
 * when a test fails (test/support/file-database-setup.ts), so a failure in CI shows what the bot
 * saw.
 */
export function outputOfStarted(lines = 60): string {
  return startedHere
    .map(({ command, output }) => {
      const tail = output().trimEnd().split('\n').slice(-lines).join('\n');
      return `--- the last ${lines} lines of ${command}:\n${tail}`;
    })
    .join('\n');
}

/** Runs to the end of `input`. */
export function runSpool(
  args: string[],
  options: { env: Record<string, string>; input?: string; timeoutMs?: number; source?: boolean },
): Promise<RunResult> {
  const { child, done } = startSpool(args, options);
  child.stdin.end(options.input ?? '');
  return done;
}

/**
 * The official MCP "everything" server, whose trigger-long-running-operation tool is a real slow
 * tool.
 */
export const EVERYTHING_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

/** server-everything over one of its HTTP transports, on a free port. */
export async function startHttpEverything(
  transport: 'streamableHttp' | 'sse',
): Promise<{ server: ChildProcess; port: number }> {
  const port = await freePort();
  const server = spawn(process.execPath, [EVERYTHING_SERVER, transport], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve) =>
    server.stderr!.on('data', (d: Buffer) => /listening|running/i.test(d.toString()) && resolve()),
  );
  return { server, port };
}

/** The official MCP filesystem server. */
export const FILESYSTEM_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

/**
 * MCP server processes running `script` anywhere below process `root`. Each runs under a watchdog
 * shell (src/tools/mcp/transport.ts), whose own command line names the script too: it is not
 * counted.
 */
export function serverPidsBelow(root: number, script: string): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .map(([pid, ppid, ...args]) => ({
      pid: Number(pid),
      ppid: Number(ppid),
      args: args.join(' '),
    }));
  const parentOf = new Map(rows.map((r) => [r.pid, r.ppid]));
  const below = (pid: number): boolean => {
    for (let at = parentOf.get(pid); at !== undefined && at > 1; at = parentOf.get(at))
      if (at === root) return true;
    return false;
  };
  return rows
    .filter((r) => r.args.includes(script) && !r.args.includes('spool-mcp-server') && below(r.pid))
    .map((r) => r.pid);
}

/** Whether any process of process group `pgid` still runs (zombies have exited). */
export function groupRuns(pgid: number): boolean {
  return execFileSync('ps', ['-eo', 'pgid=,stat='], { encoding: 'utf8' })
    .split('\n')
    .some((line) => {
      const [group, stat = ''] = line.trim().split(/\s+/);
      return Number(group) === pgid && !stat.startsWith('Z');
    });
}

/** Whether `pid` runs: a zombie has exited already. */
export function running(pid: number): boolean {
  try {
    const stat = execFileSync('cat', [`/proc/${pid}/stat`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return !/^\S+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

/**
 * Ports for the tests' own servers come from below Linux's ephemeral range (32768 and up), where
 * the kernel never hands one out on its own: a port found free there and released is not taken a
 * moment later as some connection's source port, as one taken by `listen(0)` can be under a busy
 * suite (a server child then exits with EADDRINUSE). Each test process walks its own run of it from
 * a random start; the port is listened on once to be sure it is free.
 */
const TEST_PORTS = { first: 20_000, count: 12_000 };
let nextTestPort = Math.floor(Math.random() * TEST_PORTS.count);

export async function freePort(): Promise<number> {
  for (;;) {
    const port = TEST_PORTS.first + (nextTestPort++ % TEST_PORTS.count);
    if (await listensOn(port)) return port;
  }
}

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

/**
 * Polls `probe` until it returns a value, `false` and `undefined` being none: for waiting on a row,
 * a process or a condition, never a fixed sleep. (`false` was once a value: a probe that returned
 * its comparison went on at once, before what it waited for.)
 */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<Exclude<T, false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as Exclude<T, false>;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
