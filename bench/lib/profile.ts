import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, Spool's own source, Node itself, or V8's own work. */
function owner({ functionName, url }: { functionName: string; url: string }): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.includes('/src/')) return 'spool src/';
  if (url.startsWith('node:')) return 'node internals';
  // The only WebAssembly in the process is Prisma's query compiler.
  if (url.startsWith('wasm://')) return 'WebAssembly (Prisma query compiler)';
  if (url === '') return functionName.startsWith('(') ? functionName : 'V8 built-ins (JSON, RegExp, …)';
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
