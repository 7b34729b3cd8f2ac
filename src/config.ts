import { existsSync, readFileSync } from 'node:fs';
import type { DiscordAdapterConfig } from './adapters/discord/discord-adapter.ts';
import type { SlackAdapterConfig } from './adapters/slack/slack-adapter.ts';
import { PAGE_MARKER_CHARS, PREVIEW_MARKER_CHARS } from './core/markers.ts';
import type { PreviewSizes } from './core/agent/results/preview.ts';
import type { OpenAiClientOptions } from './llm/openai-client.ts';

/** Every bad setting at once, one line each, so a newcomer fixes them in one go. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export interface Config {
  openai: OpenAiClientOptions & {
    /** One more try, with this output budget, when a reply is cut off before it says anything. */
    retryMaxTokens: number;
    /** Ask the endpoint for its models at startup, to name a wrong URL, key or model at once. */
    startupCheck: boolean;
  };
  toolResultMaxChars: number;
  toolResultBudgetChars: number;
  previewHeadChars: number;
  previewTailChars: number;
  continuationChunkChars: number;
  maxContinuationPages: number;
  microcompactTruncateTurns: number;
  microcompactSummarizeTurns: number;
  microcompactMinChars: number;
  maxContinuations: number;
  maxToolIterations: number;
  toolResultStoreMaxChars: number;
  toolResultBinaryMaxBytes: number;
  toolResultRedactSecrets: boolean;
  /** One stdio message from an MCP server: room for a result up to the store's cap, and its kept bytes. */
  mcpMaxMessageBytes: number;
  userMessageMaxChars: number;
  systemPrompt: string;
  databaseUrl?: string;
  databaseConnectTimeoutMs: number;
  dataDir: string;
  delivery: {
    /** A lane whose replica stops renewing its lease is taken over after this long. */
    leaseMs: number;
    /** On SIGTERM, how long running turns may finish before they are cut short (and resumed later). */
    shutdownGraceMs: number;
    /** Answered inbox and outbox rows are kept this long. */
    retentionDays: number;
  };
  /** MCP_CONFIG, or ./mcp.json when that exists. */
  mcpConfigPath?: string;
  /** A broken MCP config starts the bot without its tools (loudly) instead of stopping startup. */
  mcpOptional: boolean;
  /** PORT, when set: /healthz, /readyz and /metrics are served there, and Slack's events over HTTP (3000 when unset). */
  port?: number;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  logFormat: 'pretty' | 'json';
  slack?: SlackAdapterConfig;
  discord?: DiscordAdapterConfig;
}

export const DEFAULT_SYSTEM_PROMPT = `You are Spool, a helpful assistant working with a team in chat.
Use the tools you have when they help, then answer concisely in Markdown.
Long tool results are shown as a head and tail preview with a [truncated …] marker: call get_continuation with the tool_call_id and offset it names to read on, or with a pattern to find the lines you need anywhere in the result, before you rely on what is missing.
Pages you read stay in view for the rest of the turn; each page's marker says how much of the result you have in view, and what you read that had to be left out.
Old tool results may be cleared from the context the same way; get_continuation reads them again.
To recall what was said or what a tool returned earlier in this channel, call search_history.`;

type Env = Record<string, string | undefined>;

/** Reads typed values out of the environment, collecting a problem per bad value. */
class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    try {
      return secretOrSetting(this.env, name);
    } catch (error) {
      this.problems.push((error as Error).message);
      return undefined;
    }
  }

  int(name: string, fallback: number, min = 1): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min) {
      this.problems.push(`${name} must be a whole number of at least ${min} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  url(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const { protocol } = new URL(raw);
      if (!['http:', 'https:'].includes(protocol)) throw new Error();
      return raw.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name} must be an http(s) URL (got "${raw}")`);
      return undefined;
    }
  }

  list(name: string): string[] | undefined {
    const items = this.string(name)?.split(',').map((s) => s.trim()).filter(Boolean);
    return items?.length ? items : undefined;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  /** Set together or not at all: one of a pair alone is a mistake worth naming. */
  requireWith(name: string, partner: string): void {
    if (this.string(name) && !this.string(partner)) this.problems.push(`${partner} must be set when ${name} is set`);
  }
}

function systemPrompt(reader: EnvReader, env: Env): string {
  const inline = reader.string('SYSTEM_PROMPT');
  const file = reader.string('SYSTEM_PROMPT_FILE');
  if (inline && file) reader.problems.push('set SYSTEM_PROMPT or SYSTEM_PROMPT_FILE, not both');
  if (file) {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      reader.problems.push(`SYSTEM_PROMPT_FILE could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}: ${file})`);
    }
  }
  return env.SYSTEM_PROMPT?.trim() ? (env.SYSTEM_PROMPT as string) : DEFAULT_SYSTEM_PROMPT;
}

function mcpConfigPath(reader: EnvReader): string | undefined {
  const path = reader.string('MCP_CONFIG');
  if (path && !existsSync(path)) reader.problems.push(`MCP_CONFIG names a file that does not exist: ${path}`);
  return path ?? (existsSync('mcp.json') ? 'mcp.json' : undefined);
}

function databaseUrl(reader: EnvReader): string | undefined {
  const raw = reader.string('DATABASE_URL');
  if (raw === undefined) return undefined;
  try {
    if (!['postgres:', 'postgresql:'].includes(new URL(raw).protocol)) throw new Error();
    return raw;
  } catch {
    // Never echo the value: it usually holds a password.
    reader.problems.push('DATABASE_URL must be a postgresql:// URL');
    return undefined;
  }
}

/**
 * Head and tail of a preview. Unset, they are 4,000 + 1,000, scaled down to what fits beside the
 * marker in TOOL_RESULT_MAX_CHARS (and around an explicit other one); only explicit values can
 * fail to fit, and the problem says which values were defaults.
 */
function previewSizes(r: EnvReader, maxChars: number): PreviewSizes {
  const HEAD = 'TOOL_RESULT_PREVIEW_HEAD_CHARS';
  const TAIL = 'TOOL_RESULT_PREVIEW_TAIL_CHARS';
  const room = maxChars - PREVIEW_MARKER_CHARS;
  const scale = Math.max(0, Math.min(1, room / 5_000));
  let headChars = r.int(HEAD, Math.floor(4_000 * scale));
  let tailChars = r.int(TAIL, Math.floor(1_000 * scale), 0);
  const [headSet, tailSet] = [r.string(HEAD) !== undefined, r.string(TAIL) !== undefined];
  if (!headSet) headChars = Math.max(1, Math.min(headChars, room - tailChars));
  if (!tailSet) tailChars = Math.max(0, Math.min(tailChars, room - headChars));
  if (headChars + tailChars > room) {
    const value = (name: string, n: number, set: boolean) => `${name} (${n}${set ? '' : ', the default'})`;
    r.problems.push(
      `${value(HEAD, headChars, headSet)} + ${value(TAIL, tailChars, tailSet)} must leave room for the ${PREVIEW_MARKER_CHARS}-char marker within TOOL_RESULT_MAX_CHARS (${maxChars}): at most ${room} together`,
    );
  }
  return { headChars, tailChars };
}

function temperature(r: EnvReader): number | undefined {
  const raw = r.string('OPENAI_TEMPERATURE');
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (Number.isFinite(value) && value >= 0 && value <= 2) return value;
  r.problems.push(`OPENAI_TEMPERATURE must be a number from 0 to 2 (got "${raw}")`);
  return undefined;
}

/** Azure OpenAI, selected by AZURE_OPENAI_ENDPOINT (the names the openai package itself reads). */
function azureEndpoint(r: EnvReader, baseURL: string | undefined): OpenAiClientOptions['azure'] {
  const endpoint = r.url('AZURE_OPENAI_ENDPOINT');
  if (!endpoint) return undefined;
  if (baseURL) r.problems.push('AZURE_OPENAI_ENDPOINT and OPENAI_BASE_URL are both set; set one');
  const apiVersion = r.string('OPENAI_API_VERSION');
  if (!apiVersion) r.problems.push('OPENAI_API_VERSION is required with AZURE_OPENAI_ENDPOINT (for example 2024-10-21)');
  return { endpoint, apiVersion: apiVersion ?? '' };
}

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const baseURL = r.url('OPENAI_BASE_URL');
  const azure = azureEndpoint(r, baseURL);
  const apiKey = azure ? r.string('AZURE_OPENAI_API_KEY') : r.string('OPENAI_API_KEY');
  // Local servers (Ollama, vLLM, LM Studio) ignore the key, but the SDK insists on one.
  if (!apiKey && !baseURL) r.problems.push(azure ? 'AZURE_OPENAI_API_KEY is required with AZURE_OPENAI_ENDPOINT' : 'OPENAI_API_KEY is required (or set OPENAI_BASE_URL to a server that needs no key)');

  const toolResultMaxChars = r.int('TOOL_RESULT_MAX_CHARS', 20_000);
  const { headChars: previewHeadChars, tailChars: previewTailChars } = previewSizes(r, toolResultMaxChars);
  const toolResultBudgetChars = r.int('TOOL_RESULT_BUDGET_CHARS', 200_000);
  const toolResultStoreMaxChars = r.int('TOOL_RESULT_STORE_MAX_CHARS', 20_000_000, toolResultMaxChars);
  // A step is written as one jsonb value, which PostgreSQL caps at 255 MB (3 bytes a char at worst).
  if (toolResultStoreMaxChars > 80_000_000) r.problems.push(`TOOL_RESULT_STORE_MAX_CHARS must be at most 80000000 (got ${toolResultStoreMaxChars})`);
  const toolResultBinaryMaxBytes = r.int('TOOL_RESULT_BINARY_MAX_BYTES', 5_000_000, 0);
  const microcompactTruncateTurns = r.int('MICROCOMPACT_TRUNCATE_TURNS', 2);
  const microcompactSummarizeTurns = r.int('MICROCOMPACT_SUMMARIZE_TURNS', 4);
  if (microcompactSummarizeTurns < microcompactTruncateTurns) {
    r.problems.push(`MICROCOMPACT_SUMMARIZE_TURNS (${microcompactSummarizeTurns}) must be at least MICROCOMPACT_TRUNCATE_TURNS (${microcompactTruncateTurns})`);
  }

  r.requireWith('DISCORD_TOKEN', 'DISCORD_APPLICATION_ID');
  r.requireWith('DISCORD_APPLICATION_ID', 'DISCORD_TOKEN');
  const slackBotToken = r.string('SLACK_BOT_TOKEN');
  const slackAppToken = r.string('SLACK_APP_TOKEN');
  const slackSigningSecret = r.string('SLACK_SIGNING_SECRET');
  if (slackBotToken && !slackAppToken && !slackSigningSecret) {
    r.problems.push('SLACK_BOT_TOKEN needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events API over HTTP)');
  }
  if (!slackBotToken && (slackAppToken || slackSigningSecret)) r.problems.push('SLACK_BOT_TOKEN must be set when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set');

  const config: Config = {
    openai: {
      apiKey: apiKey ?? 'not-needed',
      baseURL,
      azure,
      model: r.string('OPENAI_MODEL') ?? 'gpt-4o-mini',
      contextTokens: r.string('OPENAI_CONTEXT_TOKENS') === undefined ? undefined : r.int('OPENAI_CONTEXT_TOKENS', 0, 1_000),
      parallelToolCalls: r.string('OPENAI_PARALLEL_TOOL_CALLS') === undefined ? undefined : r.oneOf('OPENAI_PARALLEL_TOOL_CALLS', ['true', 'false'] as const, 'true') === 'true',
      maxTokens: r.int('OPENAI_MAX_TOKENS', 4_096),
      retryMaxTokens: r.int('OPENAI_RETRY_MAX_TOKENS', 16_384),
      maxRetries: r.int('OPENAI_MAX_RETRIES', 3, 0),
      timeoutMs: r.int('OPENAI_TIMEOUT_MS', 120_000),
      tokenParam: r.oneOf('OPENAI_TOKEN_PARAM', ['auto', 'max_tokens', 'max_completion_tokens'] as const, 'auto'),
      startupCheck: r.oneOf('OPENAI_SKIP_STARTUP_CHECK', ['true', 'false'] as const, 'false') === 'false',
      temperature: temperature(r),
      reasoningEffort: r.string('OPENAI_REASONING_EFFORT') === undefined ? undefined : r.oneOf('OPENAI_REASONING_EFFORT', ['minimal', 'low', 'medium', 'high'] as const, 'medium'),
    },
    toolResultMaxChars,
    toolResultBudgetChars,
    previewHeadChars,
    previewTailChars,
    // A page and its marker (as the request shows it) fit in TOOL_RESULT_MAX_CHARS, as a preview does.
    continuationChunkChars: r.int('CONTINUATION_CHUNK_CHARS', Math.max(1_000, toolResultMaxChars - PAGE_MARKER_CHARS)),
    maxContinuationPages: r.int('MAX_CONTINUATION_PAGES', 50),
    microcompactTruncateTurns,
    microcompactSummarizeTurns,
    microcompactMinChars: r.int('MICROCOMPACT_MIN_CHARS', 3_000, 0),
    maxContinuations: r.int('MAX_CONTINUATIONS', 3, 0),
    maxToolIterations: r.int('MAX_TOOL_ITERATIONS', 20),
    toolResultStoreMaxChars,
    toolResultBinaryMaxBytes,
    toolResultRedactSecrets: r.oneOf('TOOL_RESULT_REDACT_SECRETS', ['true', 'false'] as const, 'false') === 'true',
    // A char takes up to 3 bytes of UTF-8 (more escaped, so the cap is not exact), kept bytes 4/3 as base64.
    mcpMaxMessageBytes: 3 * toolResultStoreMaxChars + 2 * toolResultBinaryMaxBytes + 1_048_576,
    // Its preview must fit beside the marker, as a result's does.
    userMessageMaxChars: r.int('USER_MESSAGE_MAX_CHARS', toolResultMaxChars, previewHeadChars + previewTailChars + PREVIEW_MARKER_CHARS),
    systemPrompt: systemPrompt(r, env),
    databaseUrl: databaseUrl(r),
    databaseConnectTimeoutMs: r.int('DATABASE_CONNECT_TIMEOUT_MS', 10_000),
    dataDir: r.string('DATA_DIR') ?? './data',
    delivery: {
      leaseMs: r.int('LEASE_TTL_MS', 15_000, 500),
      shutdownGraceMs: r.int('SHUTDOWN_GRACE_MS', 25_000, 0),
      retentionDays: r.int('INBOX_RETENTION_DAYS', 7),
    },
    mcpConfigPath: mcpConfigPath(r),
    mcpOptional: r.oneOf('MCP_OPTIONAL', ['true', 'false'] as const, 'false') === 'true',
    port: r.string('PORT') === undefined ? undefined : r.int('PORT', 3000),
    logLevel: r.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error'] as const, 'info'),
    logFormat: r.oneOf('LOG_FORMAT', ['pretty', 'json'] as const, 'pretty'),
    slack: slackBotToken
      ? {
          botToken: slackBotToken,
          appToken: slackAppToken,
          signingSecret: slackSigningSecret,
          apiUrl: r.url('SLACK_API_URL'),
          allowedChannels: r.list('SLACK_ALLOWED_CHANNELS'),
          allowedUsers: r.list('SLACK_ALLOWED_USERS'),
        }
      : undefined,
    discord:
      r.string('DISCORD_TOKEN') && r.string('DISCORD_APPLICATION_ID')
        ? {
            token: r.string('DISCORD_TOKEN')!,
            applicationId: r.string('DISCORD_APPLICATION_ID')!,
            guildId: r.string('DISCORD_GUILD_ID'),
            apiUrl: r.url('DISCORD_API_URL'),
            allowedGuilds: r.list('DISCORD_ALLOWED_GUILDS'),
            allowedRoles: r.list('DISCORD_ALLOWED_ROLES'),
          }
        : undefined,
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** The bot's own secrets: masked in logs, and never expanded into a tool server's config. */
export const SECRET_ENV_NAMES: ReadonlySet<string> = new Set([
  'OPENAI_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'DATABASE_URL',
  'SLACK_BOT_TOKEN',
  'SLACK_APP_TOKEN',
  'SLACK_SIGNING_SECRET',
  'DISCORD_TOKEN',
]);

/**
 * A setting's value; a secret's may instead come from the file named by `<NAME>_FILE`, so that it
 * is never in the process's initial environment, which `/proc/<pid>/environ` shows to any process
 * of the same user, MCP servers included. Throws a message naming the problem.
 */
function secretOrSetting(env: Env, name: string): string | undefined {
  const file = SECRET_ENV_NAMES.has(name) ? env[`${name}_FILE`]?.trim() : undefined;
  const value = env[name]?.trim();
  if (!file) return value ? value : undefined;
  if (value) throw new Error(`${name} and ${name}_FILE are both set; set one`);
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    throw new Error(`${name}_FILE names a file that cannot be read: ${file}`);
  }
}

/** Values that must never appear in logs, the database or a tool server's environment. */
export function secretsOf(env: Env = process.env): string[] {
  const read = (name: string) => {
    try {
      return secretOrSetting(env, name);
    } catch {
      return undefined; // reported by loadConfig
    }
  };
  const values = [...SECRET_ENV_NAMES].map(read);
  const databaseUrl = read('DATABASE_URL');
  try {
    if (databaseUrl) values.push(decodeURIComponent(new URL(databaseUrl).password));
  } catch {
    // an invalid DATABASE_URL is reported by loadConfig; nothing more to mask
  }
  return values.filter((s): s is string => typeof s === 'string' && s.length >= 6);
}
