import type { Dispatcher } from 'undici';
import { fetchThrough } from '../proxy.ts';
import { DEFAULT_WINDOW, knownWindow } from './model-windows.ts';

/**
 * The model's context window and where Spool learnt it, in this order: OPENAI_CONTEXT_TOKENS; what
 * the model server reports; the table of well-known models (model-windows.ts); else a stated
 * default.
 */
export interface ModelWindow {
  tokens: number;
  source:
    | { kind: 'setting' }
    | { kind: 'server'; what: string }
    | { kind: 'known'; name: string }
    | { kind: 'default' };
  model: string;
}

/** What a model server said of its window, and in which field. */
export interface ReportedWindow {
  tokens: number;
  what: string;
}

/** The window known without asking the server: the setting, the table, or the default. */
export function assumedWindow(model: string, setting?: number): ModelWindow {
  if (setting !== undefined) return { tokens: setting, source: { kind: 'setting' }, model };
  const known = knownWindow(model);
  if (known) return { tokens: known.tokens, source: { kind: 'known', name: known.name }, model };
  return { tokens: DEFAULT_WINDOW, source: { kind: 'default' }, model };
}

/** Where the window came from, in words: the log line's parenthesis. */
export function windowSource(window: ModelWindow): string {
  const { source, model } = window;
  switch (source.kind) {
    case 'setting':
      return 'OPENAI_CONTEXT_TOKENS';
    case 'server':
      return `reported by the server: ${source.what}`;
    case 'known':
      return source.name === model
        ? `known model ${model}`
        : `known model "${model}", as ${source.name}`;
    case 'default':
      return `default: unknown model "${model}"; set OPENAI_CONTEXT_TOKENS`;
  }
}

/** The line logged once at start. */
export const windowLine = (window: ModelWindow) =>
  `Model window: ${window.tokens.toLocaleString('en')} tokens (${windowSource(window)})`;

const positive = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;

/**
 * The window in a `/models` listing's entry for `model`: vLLM's `max_model_len` (its ModelCard),
 * or OpenRouter's `context_length`, the smaller of the model's and `top_provider`'s (the catalogue
 * names the largest over its providers at the top, the default route's in `top_provider`).
 */
export function windowInListing(
  entries: readonly unknown[],
  model: string,
): ReportedWindow | undefined {
  const entry = entries.map(record).find((e) => e?.id === model);
  if (!entry) return undefined;
  const vllm = positive(entry.max_model_len);
  if (vllm) return { tokens: vllm, what: 'vLLM max_model_len' };
  const lengths = [entry.context_length, record(entry.top_provider)?.context_length].flatMap(
    (n) => positive(n) ?? [],
  );
  if (lengths.length) return { tokens: Math.min(...lengths), what: 'OpenRouter context_length' };
  return undefined;
}

/** llama.cpp's server: `GET /props`, `default_generation_settings.n_ctx` (its --ctx-size). */
export function llamaCppWindow(props: unknown): ReportedWindow | undefined {
  const tokens = positive(record(record(props)?.default_generation_settings)?.n_ctx);
  return tokens ? { tokens, what: 'llama.cpp n_ctx' } : undefined;
}

/** Ollama's names carry a tag; a name without one means `:latest`. */
const ollamaName = (name: string) => (name.includes(':') ? name : `${name}:latest`);

/**
 * Ollama's `GET /api/ps`: a loaded model's `context_length`, the window it was loaded with (its
 * num_ctx, or the server's default).
 */
export function ollamaLoadedWindow(ps: unknown, model: string): ReportedWindow | undefined {
  const models = record(ps)?.models;
  if (!Array.isArray(models)) return undefined;
  const entry = models
    .map(record)
    .find((m) =>
      [m?.name, m?.model].some((n) => typeof n === 'string' && ollamaName(n) === ollamaName(model)),
    );
  const tokens = positive(entry?.context_length);
  return tokens ? { tokens, what: 'Ollama context_length of the loaded model' } : undefined;
}

/**
 * Ollama's `POST /api/show`: `num_ctx` in `parameters` (lines of "name value") when the model's
 * Modelfile sets it. `model_info`'s `<arch>.context_length` is the length the model was trained
 * for, not what Ollama serves, and is not read.
 */
export function ollamaSetWindow(show: unknown): ReportedWindow | undefined {
  const parameters = record(show)?.parameters;
  if (typeof parameters !== 'string') return undefined;
  const match = /^num_ctx\s+(\d+)\s*$/m.exec(parameters);
  const tokens = match ? positive(Number(match[1])) : undefined;
  return tokens ? { tokens, what: 'Ollama num_ctx' } : undefined;
}

/**
 * What Ollama serves a model whose Modelfile sets no num_ctx and that is not loaded yet: its
 * default, 4,096 tokens since 0.6.7 (2,048 before) on a machine under 24 GiB of VRAM, more above
 * it (32,768 to 48 GiB, 262,144 beyond, since 0.15.5), or OLLAMA_CONTEXT_LENGTH. The least of them
 * Spool can count on; Ollama cuts a longer prompt without a word.
 * https://docs.ollama.com/context-length
 */
export const OLLAMA_DEFAULT_WINDOW = 4_096;

/**
 * LM Studio's `GET /api/v0/models/{model}`: `loaded_context_length`, the window a loaded model was
 * loaded with. `max_context_length` is the model's own, not what is served, and is not read.
 */
export function lmStudioWindow(model: unknown): ReportedWindow | undefined {
  const tokens = positive(record(model)?.loaded_context_length);
  return tokens ? { tokens, what: 'LM Studio loaded_context_length' } : undefined;
}

/** Ollama answered both: it lists what it has loaded, and it showed the model. */
const ollamaKnows = (ps: unknown, show: unknown) =>
  Array.isArray(record(ps)?.models) &&
  ['modelfile', 'details', 'model_info'].some((key) => record(show)?.[key] !== undefined);

/** The server's own root: `http://host:11434/v1` → `http://host:11434`. */
export function serverRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export interface AskOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** The `/models` listing the endpoint check already fetched. */
  listing: readonly unknown[];
  dispatcher?: Dispatcher;
  /** Each request's own limit: none may hold up the start for long. */
  timeoutMs?: number;
}

/**
 * What the model server says of its window, or undefined: the listing first (vLLM, OpenRouter),
 * then, at once, llama.cpp's, Ollama's and LM Studio's own routes on the same server. Never
 * throws: a server that answers none of them is simply not one of them.
 */
export async function askServer(options: AskOptions): Promise<ReportedWindow | undefined> {
  const listed = windowInListing(options.listing, options.model);
  if (listed) return listed;
  const root = serverRoot(options.baseURL);
  const fetcher = fetchThrough(options.dispatcher);
  const json = async (path: string, body?: unknown): Promise<unknown> => {
    try {
      const response = await fetcher(`${root}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 2_000),
      });
      return response.ok ? await response.json() : undefined;
    } catch {
      return undefined;
    }
  };
  const { model } = options;
  const [props, ps, show, lmStudio] = await Promise.all([
    json('/props'),
    json('/api/ps'),
    json('/api/show', { model }),
    json(`/api/v0/models/${encodeURIComponent(model)}`),
  ]);
  return (
    llamaCppWindow(props) ??
    ollamaLoadedWindow(ps, model) ??
    ollamaSetWindow(show) ??
    // Ollama knows the model (it showed it) but neither loaded it nor sets a window for it.
    (ollamaKnows(ps, show)
      ? { tokens: OLLAMA_DEFAULT_WINDOW, what: "Ollama's default num_ctx, the least it serves" }
      : undefined) ??
    lmStudioWindow(lmStudio)
  );
}
