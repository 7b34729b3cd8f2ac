import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
  /** In µs of the monotonic clock, as `process.hrtime` reads it in any process of the machine. */
  startTime: number;
}

type Frame = CpuProfile['nodes'][number]['callFrame'];

/** The package a frame's code is in, if any. */
const packageOf = (frame: Frame) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];

/** Where a frame's code lives: a package, Spool's own source, Node itself, or V8's own work. */
function owner(frame: Frame): string {
  const { functionName, url } = frame;
  const pkg = packageOf(frame);
  if (pkg) return pkg;
  // Spool runs from its build (dist/) as `npm start` does, or from src/ through tsx.
  if (url.includes('/src/') || url.includes('/dist/')) return 'spool';
  if (url.startsWith('node:')) return 'node internals';
  // The only WebAssembly in the process is Prisma's query compiler.
  if (url.startsWith('wasm://')) return 'WebAssembly (Prisma query compiler)';
  if (url === '')
    return functionName.startsWith('(') ? functionName : 'V8 built-ins (JSON, RegExp, …)';
  return 'other';
}

/**
 * Self time by owner in every `.cpuprofile` under `dir` (written by `node --cpu-prof`), as
 * Markdown rows `| owner | ms | share |`, largest first, idle time left out.
 */
export function profileByOwner(dir: string, top = 12): string[] {
  const totals = new Map<string, number>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, owner(n.callFrame)]));
    profile.samples.forEach((id, i) => {
      const who = byId.get(id)!;
      if (who !== '(idle)') totals.set(who, (totals.get(who) ?? 0) + profile.timeDeltas[i]! / 1000);
    });
  }
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([who, ms]) => `| ${who} | ${ms.toFixed(0)} ms | ${((100 * ms) / all).toFixed(1)}% |`);
}

/**
 * Each sample's frame, the nearest caller that is not Node's or V8's own, its time, when it was
 * taken (µs of the monotonic clock) and its whole stack, leaf first.
 */
function eachSample(
  dir: string,
  visit: (frame: Frame, caller: string, ms: number, at: number, stack: () => Frame[]) => void,
): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map(
      profile.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n.id] as const)),
    );
    const caller = (id: number): string => {
      for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
        const who = owner(byId.get(at)!.callFrame);
        if (who !== 'node internals' && !who.startsWith('V8') && !who.startsWith('(')) return who;
      }
      return '';
    };
    const stack = (id: number) => {
      const frames: Frame[] = [];
      for (let node: number | undefined = id; node !== undefined; node = parent.get(node))
        frames.push(byId.get(node)!.callFrame);
      return frames;
    };
    let takenAt = profile.startTime;
    profile.samples.forEach((id, i) => {
      takenAt += profile.timeDeltas[i]!;
      const { callFrame } = byId.get(id)!;
      if (callFrame.functionName !== '(idle)')
        visit(callFrame, caller(id), profile.timeDeltas[i]! / 1000, takenAt, () => stack(id));
    });
  }
}

const rowsOf = (totals: Map<string, number>, top: number) =>
  [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, ms]) => `${key} ${ms.toFixed(0)} ms |`);

/**
 * The functions with the most self time in every `.cpuprofile` under `dir`, as Markdown rows
 * `| function | called from | ms |`. A native function (a syscall such as `writev`, JSON.parse)
 * is named with the package of the nearest JavaScript frame that called it, so that the socket
 * writes of the database driver and of the HTTP client stand apart.
 */
export function topFunctions(dir: string, top = 15): string[] {
  const totals = new Map<string, number>();
  eachSample(dir, ({ functionName, url, lineNumber }, caller, ms) => {
    const where =
      url.startsWith('node:') || url === ''
        ? caller
        : `${url.replace(/.*node_modules\//, '').replace(/.*\/(src|dist)\//, '$1/')}:${lineNumber + 1}`;
    const key = `| ${functionName || '(anonymous)'} | ${where} |`;
    totals.set(key, (totals.get(key) ?? 0) + ms);
  });
  return rowsOf(totals, top);
}

/**
 * Node's and V8's own self time (sockets, HTTP, JSON, RegExp) by the package whose code asked for
 * it, as Markdown rows `| package | ms |`: whose work the largest rows of `profileByOwner` are.
 */
export function builtinsByCaller(dir: string, top = 12): string[] {
  const totals = new Map<string, number>();
  eachSample(dir, (frame, caller, ms) => {
    const who = owner(frame);
    if (who !== 'node internals' && !who.startsWith('V8')) return;
    const key = `| ${caller || '(none: the event loop)'} |`;
    totals.set(key, (totals.get(key) ?? 0) + ms);
  });
  return rowsOf(totals, top);
}

/**
 * What a sample's work served, from its stack (leaf first): the first rule that matches. Spool's
 * parts the durable floor has no counterpart for come first, so that the database or HTTP work
 * done for them counts as theirs.
 */
function partOf(stack: Frame[]): string {
  const packages = stack.map(packageOf).filter((p) => p !== undefined);
  const inOwn = (path: string) => stack.some((f) => !packageOf(f) && f.url.includes(path));
  if (stack[0]!.functionName === '(garbage collector)') return 'garbage collector';
  if (inOwn('/adapters/slack/status.')) return "Slack's working indicator";
  if (inOwn('/adapters/slack/mrkdwn/') || packages.some((p) => /^(micromark|mdast|remark)/.test(p)))
    return 'Markdown to mrkdwn';
  if (packages.some((p) => /^pg(-pool|-protocol)?$/.test(p))) return 'database client (pg)';
  if (packages.some((p) => p.startsWith('@prisma/')) || stack[0]!.url.startsWith('wasm://'))
    return 'Prisma';
  if (packages.includes('openai')) return 'model client (openai)';
  if (packages.includes('@slack/web-api')) return 'Slack Web API (the posts)';
  if (packages.some((p) => /^(@slack\/bolt|tsscmp|express|body-parser|raw-body)$/.test(p)))
    return 'Slack events in (Bolt, signatures)';
  if (stack.some((f) => !packageOf(f) && /\/(src|dist|bench)\//.test(f.url)))
    return "the bot's own code";
  return 'Node (event loop, sockets, timers)';
}

/**
 * CPU time in ms by what it served (`partOf`), of the samples every `.cpuprofile` under `dir`
 * took between `fromUs` and `toUs` (the monotonic clock in µs, as `process.hrtime` reads it): a
 * burst's work without the process's start-up or its idle waits.
 */
export function cpuByPart(dir: string, fromUs: number, toUs: number): Map<string, number> {
  const totals = new Map<string, number>();
  eachSample(dir, (_frame, _caller, ms, at, stack) => {
    if (at < fromUs || at > toUs) return;
    const part = partOf(stack());
    totals.set(part, (totals.get(part) ?? 0) + ms);
  });
  return totals;
}
