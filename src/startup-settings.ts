/**
 * What Spool is told before it starts: the command line, the settings (config.ts, each module's
 * own section), mcp.json, and the checks across them that decide whether to start at all. main.ts
 * wires and starts what these say.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, SECRET_ENV_NAMES, type Config } from './config.ts';
import type { Logger } from './core/logger.ts';
import { errorMessage } from './core/errors.ts';
import { loadMcpConfig, McpConfigError, type McpConfig } from './tools/mcp/config/config.ts';

export const USAGE = `Usage: npm start                      the bot: every platform whose credentials are set, else the console
       npm run chat [-- --session NAME] the console chat; NAME keeps a conversation of its own (default: console)
       npm start -- mcp login SERVER   logs Spool in to an MCP server of mcp.json that asks for OAuth
       npm start -- --help             this text

Settings come from the environment and .env; .env.example lists every one with its default.
`;

/** The command line and the settings, or the exit status when they say not to start. */
export function readSettings():
  | { args: ReturnType<typeof parseCommandLine>['values']; positionals: string[]; config: Config }
  | number {
  let args: ReturnType<typeof parseCommandLine>;
  try {
    args = parseCommandLine();
  } catch (error) {
    process.stderr.write(`${errorMessage(error)}\n\n${USAGE}`);
    return 2;
  }
  if (args.values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    return { args: args.values, positionals: args.positionals, config: loadConfig() };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\nSee .env.example for every setting.\n`);
    return 2;
  }
}

/**
 * The embedded database's directory when the command line and the settings say that this start
 * opens it: none for --help, for what readSettings refuses, or with DATABASE_URL.
 */
export function embeddedDataDir(): string | undefined {
  try {
    if (parseCommandLine().values.help) return undefined;
    const { store } = loadConfig();
    return store.databaseUrl ? undefined : store.dataDir;
  } catch {
    return undefined;
  }
}

/**
 * Slack's Events API and people's sign-ins (PUBLIC_URL) need the port (3000 unless PORT says
 * otherwise); without them, PORT alone asks for one.
 */
export function httpPortOf(
  config: Config,
  platformNames: string[],
  consoleMode: boolean,
): number | undefined {
  // Installs' pages are served here too.
  const slackOverHttp =
    platformNames.includes('slack') && (!config.slack?.appToken || !!config.slack.installs);
  // People's sign-ins come back to PUBLIC_URL, served here.
  const signIns = !!config.tools.oauth.signInRedirectUrl;
  // The console's web pages: on a free port of this machine alone, unless PORT says otherwise.
  const local = consoleMode && config.web.enabled ? 0 : undefined;
  return config.server.port ?? (slackOverHttp || signIns ? 3000 : local);
}

/**
 * Why servers used with each person's own sign-in cannot start: a platform that runs without its
 * own sign-in, with which Spool checks who follows a link (else a forwarded link would sign in the
 * person it was sent to with whoever opened it).
 */
export async function uncheckedSignIns(
  config: Config,
  mcp: McpConfig | undefined,
  platformNames: string[],
): Promise<string | undefined> {
  if (!mcp || !config.tools.oauth.signInRedirectUrl) return undefined;
  const people = (await import('./tools/mcp/sign-in/cross-app.ts'))
    .signInServers(mcp)
    .map((s) => s.name);
  if (people.length === 0) return undefined;
  const missing = [
    platformNames.includes('slack') &&
      !config.slack?.clientSecret &&
      'SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (Sign in with Slack)',
    platformNames.includes('discord') &&
      !config.discord?.clientSecret &&
      "DISCORD_CLIENT_SECRET (Discord's OAuth2 sign-in)",
  ].filter((m): m is string => !!m);
  if (missing.length === 0) return undefined;
  return `MCP servers used with each person's own sign-in (${people.join(', ')}) need ${missing.join(' and ')}: Spool checks with it who follows a sign-in link (docs/mcp-and-sign-ins.md: Tools that act as each person).`;
}

/**
 * The MCP config, read before anything starts: a broken file stops startup unless
 * MCP_OPTIONAL=true.
 */
export async function readMcpConfig(
  config: Config,
  logger: Logger,
): Promise<McpConfig | undefined | 'refused'> {
  if (!config.tools.mcpConfigPath) return undefined;
  try {
    return await loadMcpConfig(config.tools.mcpConfigPath, process.env, SECRET_ENV_NAMES);
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    if (!config.tools.mcpOptional) {
      process.stderr.write(
        `${error.message}\nFix it, or set MCP_OPTIONAL=true to start without its tools.\n`,
      );
      return 'refused';
    }
    logger.warn(`STARTING WITHOUT ANY MCP TOOLS (MCP_OPTIONAL=true): ${error.message}`);
    return undefined;
  }
}

function parseCommandLine() {
  return parseArgs({
    allowPositionals: true,
    options: {
      session: { type: 'string', default: 'console' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
