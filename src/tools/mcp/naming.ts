import { createHash } from 'node:crypto';

const MAX = 64;

function sanitize(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** Fits `base` plus `suffix` in 64 chars; a cut name gets a short hash so cuts stay distinct. */
function fit(base: string, suffix = ''): string {
  if (base.length + suffix.length <= MAX) return base + suffix;
  const hash = createHash('sha256').update(base).digest('hex').slice(0, 6);
  return `${base.slice(0, MAX - suffix.length - 7)}_${hash}${suffix}`;
}

/**
 * Names the model sees, `<server>__<tool>`, made of the characters the OpenAI API accepts and at
 * most 64 long. Collisions are resolved in (server, tool) order, so the same servers and tools
 * always get the same names.
 */
export function exposedToolNames(tools: ReadonlyArray<{ server: string; tool: string }>): string[] {
  const order = tools
    .map((t, i) => ({ ...t, i }))
    .sort((a, b) => a.server.localeCompare(b.server) || a.tool.localeCompare(b.tool) || a.i - b.i);
  const taken = new Set<string>();
  const names: string[] = new Array(tools.length);
  for (const { server, tool, i } of order) {
    const base = sanitize(`${server}__${tool}`);
    let name = fit(base);
    for (let n = 2; taken.has(name); n++) name = fit(base, `_${n}`);
    taken.add(name);
    names[i] = name;
  }
  return names;
}
