import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';

/** Past this many values a tree is not drawn: the pretty-printed text is paged instead. */
export const TREE_MAX_NODES = 20_000;

/** How many values `value` holds, counting itself; stops counting past `max`. */
export function nodeCount(value: unknown, max = TREE_MAX_NODES): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= max) {
    const next = stack.pop();
    count++;
    if (next && typeof next === 'object') stack.push(...Object.values(next));
  }
  return count;
}

const scalar = (value: unknown): Html =>
  html`<span class="${value === null ? 'null' : typeof value}"
    >${inert(JSON.stringify(value))}</span
  >`;

/**
 * A JSON value as nested `<details>`, each object and array folded past the first two levels; keys
 * and strings as inert text.
 */
export function jsonTree(value: unknown, depth = 0): Html {
  if (value === null || typeof value !== 'object') return scalar(value);
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value);
  const label = Array.isArray(value) ? `[${entries.length} items]` : `{${entries.length} keys}`;
  if (entries.length === 0) return html`<span>${Array.isArray(value) ? '[]' : '{}'}</span>`;
  const items = entries.map(
    ([key, v]) =>
      html`<li>
        ${Array.isArray(value) ? '' : html`<span class="key">${inert(JSON.stringify(key))}</span>: `}${jsonTree(v, depth + 1)}
      </li>`,
  );
  return html`<details${depth < 2 ? html` open` : ''}><summary>${label}</summary><ul>${items}</ul></details>`;
}
