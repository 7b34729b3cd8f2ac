import { readFileSync } from 'node:fs';
import { tracingSettings, type TracingSettings } from './tracing/settings.ts';
import { discordSettings, type DiscordSettings } from './adapters/discord/settings.ts';
import { slackSettings, type SlackSettings } from './adapters/slack/settings.ts';
import { agentSettings, type AgentSettings } from './core/agent/settings.ts';
import { deliverySettings, type DeliverySettings } from './core/delivery/settings.ts';
import type { SettingsReader } from './core/ports/settings.ts';
import { openAiSettings, type OpenAiSettings } from './llm/settings.ts';
import { storeSettings, type StoreSettings } from './store/settings.ts';
import { toolSettings, type ToolSettings } from './tools/settings.ts';
import { errorMessage } from './core/errors.ts';
import { webSettings, type WebSettings } from './web/settings.ts';

/** Every bad setting at once, one line each, so a newcomer fixes them in one go. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** The settings, one section per module that declares and validates it. */
export interface Config {
  agent: AgentSettings;
  openai: OpenAiSettings;
  store: StoreSettings;
  delivery: DeliverySettings;
  tools: ToolSettings;
  server: ServerSettings;
  slack?: SlackSettings;
  discord?: DiscordSettings;
  tracing: TracingSettings;
  web: WebSettings;
}

/** main's own section. */
export interface ServerSettings {
  /**
   * PORT, when set: /healthz, /readyz and /metrics are served there, and Slack's events over HTTP
   * (3000 when unset).
   */
  port?: number;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  logFormat: 'pretty' | 'json';
}

type Env = Record<string, string | undefined>;

/**
 * Reads typed values out of the environment, collecting a problem per bad value and the name of
 * every setting read.
 */
export class EnvReader implements SettingsReader {
  readonly problems: string[] = [];
  readonly names = new Set<string>();
  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    this.names.add(name);
    try {
      return secretOrSetting(this.env, name);
    } catch (error) {
      this.problems.push(errorMessage(error));
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
    const items = this.string(name)
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return items?.length ? items : undefined;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  flag(name: string, fallback: boolean): boolean {
    return this.oneOf(name, ['true', 'false'] as const, fallback ? 'true' : 'false') === 'true';
  }

  file(name: string): string | undefined {
    const path = this.string(name);
    if (path === undefined) return undefined;
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      this.problems.push(
        `${name} could not be read (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}: ${path})`,
      );
      return undefined;
    }
  }

  problem(text: string): void {
    this.problems.push(text);
  }

  secrets(): string[] {
    return secretsOf(this.env);
  }
}

/** Every section, read through `r`; its problems are left on `r`. */
export function readConfig(r: EnvReader): Config {
  const agent = agentSettings(r);
  return {
    agent,
    openai: openAiSettings(r),
    store: storeSettings(r),
    delivery: deliverySettings(r),
    tools: toolSettings(r, agent.loop.resultIntake.storeMaxChars),
    server: {
      port: r.string('PORT') === undefined ? undefined : r.int('PORT', 3000),
      logLevel: r.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error'] as const, 'info'),
      logFormat: r.oneOf('LOG_FORMAT', ['pretty', 'json'] as const, 'pretty'),
    },
    slack: slackSettings(r),
    discord: discordSettings(r),
    tracing: tracingSettings(r),
    web: webSettings(r),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const config = readConfig(r);
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
  'SLACK_CLIENT_SECRET',
  'DISCORD_TOKEN',
  'DISCORD_CLIENT_SECRET',
  'MCP_OAUTH_KEY',
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
