import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expand, isObject, McpConfigError, type Env } from './config-values.ts';
import { DEFAULT_SAMPLING, type SamplingLimits } from '../server-requests/sampling-limits.ts';

/** What a server may ask of Spool besides tool calls' answers: the model (sampling), its roots. */

const positive = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value > 0;

/** `"sampling": true` (the default limits) or `{ "maxTokens": …, "perCall": … }`. */
export function samplingOf(raw: unknown): { sampling?: SamplingLimits } {
  if (raw === undefined || raw === false) return {};
  if (raw === true) return { sampling: DEFAULT_SAMPLING };
  const {
    maxTokens = DEFAULT_SAMPLING.maxTokens,
    perCall = DEFAULT_SAMPLING.perCall,
    ...rest
  } = isObject(raw) ? raw : { invalid: raw };
  if (Object.keys(rest).length > 0 || !positive(maxTokens) || !positive(perCall))
    throw new McpConfigError(
      '"sampling" must be true, or { "maxTokens": N, "perCall": N } with positive whole numbers',
    );
  return { sampling: { maxTokens, perCall } };
}

/**
 * `"roots"`: folders (relative to mcp.json's folder) or file:// URIs, each a string or
 * `{ "uri", "name" }`.
 */
export function rootsOf(
  raw: unknown,
  baseDir: string,
  env: Env,
  secrets: ReadonlySet<string>,
): { roots?: Array<{ uri: string; name?: string }> } {
  if (raw === undefined) return {};
  if (!Array.isArray(raw)) throw new McpConfigError('"roots" must be an array');
  const roots = raw.map((entry: unknown) => {
    const { uri, name } =
      typeof entry === 'string' ? { uri: entry, name: undefined } : isObject(entry) ? entry : {};
    if (typeof uri !== 'string' || !uri || (name !== undefined && typeof name !== 'string'))
      throw new McpConfigError('"roots" must list folders or file:// URIs, or { "uri", "name" }');
    const expanded = expand(uri, env, secrets);
    // MCP's roots are file:// URIs (the specification's Root): a folder, or one given so.
    if (/^[a-z][a-z0-9+.-]+:\/\//i.test(expanded) && !expanded.startsWith('file://'))
      throw new McpConfigError(`"roots" are folders or file:// URIs, not ${expanded}`);
    const href = expanded.startsWith('file://')
      ? expanded
      : pathToFileURL(resolve(baseDir, expanded)).href;
    return { uri: href, ...(name ? { name } : {}) };
  });
  return { roots };
}
