import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { consoleOutbound, runConsole, welcomeLine } from './adapters/console/console-adapter.ts';
import { ConsoleScreen } from './adapters/console/screen.ts';
import { ConfigError, loadConfig, SECRET_ENV_NAMES, secretsOf, type Config } from './config.ts';
import { Agent } from './core/agent/agent.ts';
import type { Logger } from './core/logger.ts';
import { observers } from './core/agent/hooks.ts';
import { InboundPipeline } from './core/inbound/pipeline.ts';
import { secretMasker } from './core/redact.ts';
import { ApprovalLedger } from './store/approval-ledger.ts';
import { getContinuationTool } from './core/agent/results/get-continuation.ts';
import { OpenAiChatClient } from './llm/openai-client.ts';
import { fileReader } from './files/file-reader.ts';
import { createLogger, logAgentEvents } from './logging.ts';
import { agentMetrics, observabilityRoutes, Readiness, replyMetrics, serveRoutes } from './observability.ts';
import { proxyFromEnv } from './proxy.ts';
import { openDatabase } from './store/database.ts';
import { DeliveryLedger } from './store/delivery-ledger.ts';
import { HistorySearch } from './store/history-search.ts';
import { ResultIndexer } from './store/result-index.ts';
import { TranscriptStore } from './store/transcript-store.ts';
import { loadMcpConfig, McpConfigError, type McpConfig } from './tools/mcp/config.ts';
import { McpToolSource } from './tools/mcp/source.ts';
import { builtinSource, ToolRegistry, type ToolSource } from './tools/registry.ts';
import { searchHistoryTool } from './tools/search-history.ts';

const USAGE = `Usage: npm start                      the bot: every platform whose credentials are set, else the console
       npm run chat [-- --session NAME] the console chat; NAME keeps a conversation of its own (default: console)
       npm start -- --help             this text

Settings come from the environment and .env; .env.example lists every one with its default.
`;

async function main(): Promise<number> {
  let args: ReturnType<typeof parseCommandLine>;
  try {
    args = parseCommandLine();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = args;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\nSee .env.example for every setting.\n`);
      return 2;
    }
    throw error;
  }
  const consoleMode = positionals[0] === 'chat' || (!config.slack && !config.discord);
  // At a terminal, log lines are drawn above the prompt and "thinking…", never into them.
  const screen = consoleMode && process.stdin.isTTY && process.stderr.isTTY ? new ConsoleScreen(process.stderr) : undefined;
  const logger: Logger = createLogger({ level: config.server.logLevel, format: config.server.logFormat, secrets: secretsOf(), stream: screen?.logStream });
  const mcp = await readMcpConfig(config, logger);
  if (mcp === 'refused') return 2;

  // /healthz answers from here on; /readyz once the database and every platform are ready.
  const registry = new Registry();
  const platformNames = consoleMode ? [] : [config.slack && 'slack', config.discord && 'discord'].filter((name): name is string => !!name);
  const readiness = new Readiness(['database', ...platformNames]);
  // Slack's Events API needs the port (3000 unless PORT says otherwise); without it, PORT alone asks for one.
  const httpPort = config.server.port ?? (platformNames.includes('slack') && !config.slack?.appToken ? 3000 : undefined);
  const endpoint = httpPort === undefined ? undefined : await serveRoutes(httpPort, observabilityRoutes(registry, readiness));

  // The embedded server lost for good: one line, and a non-zero exit for the supervisor to act on.
  const onLost = (reason: string) => {
    logger.error(`Exiting: ${reason}`);
    process.exit(1);
  };
  const db = await openDatabase({ ...config.store, logger, onLost });
  logger.info(`Database: ${db.description}`);
  readiness.set('database', () => db.pool.query('SELECT 1').then(() => true, () => false));
  const store = new TranscriptStore(db.prisma);
  // Tool results are indexed for search in the background, off the turn.
  const indexer = new ResultIndexer(db.prisma, logger);
  indexer.start();
  const search = new HistorySearch(db.prisma, indexer);
  const sources: ToolSource[] = [builtinSource([searchHistoryTool(search), getContinuationTool(store, config.agent.pages)])];
  if (mcp) {
    try {
      sources.push(await McpToolSource.start(mcp, logger, config.tools));
    } catch (error) {
      logger.error(`MCP tools disabled: ${(error as Error).message}`);
    }
  }
  const tools = new ToolRegistry(sources);
  // One proxy (if HTTPS_PROXY / HTTP_PROXY is set) for the model, Slack and Discord alike.
  const dispatcher = proxyFromEnv();
  const llm = new OpenAiChatClient({ ...config.openai, dispatcher });
  const endpointProblem = config.openai.startupCheck ? await llm.checkEndpoint() : undefined;
  if (endpointProblem) logger.warn(`Model endpoint check, starting anyway: ${endpointProblem}`);
  const ledger = new DeliveryLedger(db.prisma, db.ackPrisma);
  const agent = new Agent({ llm, tools, store, logger, hooks: observers(agentMetrics(registry, ledger), logAgentEvents(logger)) }, config.agent.loop);
  const windowProblem = await llm.windowProblem(agent.emptyRequest());
  if (windowProblem) logger.warn(windowProblem);

  // Nobody else can reach the embedded database: leases left by a killed run are ours to take now.
  if (db.embedded) await ledger.releaseAll();
  const pipeline = new InboundPipeline(
    { agent, inbox: ledger, search, files: fileReader({ binaryMaxBytes: config.tools.binaryMaxBytes }), approvals: new ApprovalLedger(db.prisma), mask: secretMasker(secretsOf()), logger, onAnswered: replyMetrics(registry) },
    { holder: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, ...config.delivery },
  );

  try {
    if (consoleMode) {
      const io = { input: process.stdin, output: process.stdout, screen };
      pipeline.register('console', consoleOutbound(io));
      pipeline.start();
      // A signal ends the input like end of file does: the reply under way is finished, the database shut down.
      const stopInput = new AbortController();
      void untilSignal().then(() => stopInput.abort());
      const welcome = welcomeLine({ model: config.openai.model, database: db.description, tools: agent.emptyRequest().tools.length });
      const failedTurns = await runConsole(pipeline, { session: values.session, signal: stopInput.signal, welcome, ...io });
      await pipeline.stop(config.delivery.shutdownGraceMs);
      // Every reply was printed; a failed turn still makes the exit status say so, for scripts.
      return failedTurns > 0 ? 1 : 0;
    }
    // Each platform's SDK is loaded only when it is configured: Bolt and discord.js take seconds to import.
    const configured = [
      config.slack && { name: 'Slack', adapter: new (await import('./adapters/slack/slack-adapter.ts')).SlackAdapter({ ...config.slack, dispatcher }, pipeline, logger) },
      config.discord && { name: 'Discord', adapter: new (await import('./adapters/discord/discord-adapter.ts')).DiscordAdapter({ ...config.discord, dispatcher }, pipeline, logger) },
    ].filter((p) => !!p);
    // One platform failing to connect (a revoked token, an outage) must not take the others down.
    const platforms = [];
    for (const { name, adapter } of configured) {
      try {
        await adapter.start();
        platforms.push(adapter);
        readiness.set(name.toLowerCase(), () => adapter.ready());
        const handler = 'httpHandler' in adapter ? adapter.httpHandler() : undefined;
        if (handler) endpoint?.mount(handler);
      } catch (error) {
        logger.error(`${name} could not start: ${(error as Error).message}`);
        await adapter.stop().catch(() => {});
      }
    }
    if (platforms.length === 0) return 1;
    pipeline.start();
    const prune = () => ledger.prune(config.store.retentionDays).catch((error: Error) => logger.warn('Could not prune the inbox', { error: error.message }));
    void prune();
    const pruning = setInterval(prune, 86_400_000).unref();
    await untilSignal();
    clearInterval(pruning);
    // Still receiving while turns finish: what arrives now is stored for the next start or another replica.
    logger.info('Shutting down');
    await pipeline.stop(config.delivery.shutdownGraceMs);
    await Promise.allSettled(platforms.map((p) => p.stop()));
    return 0;
  } finally {
    endpoint?.server.close();
    await tools.close();
    await indexer.stop();
    await db.close();
  }
}

/** The MCP config, read before anything starts: a broken file stops startup unless MCP_OPTIONAL=true. */
async function readMcpConfig(config: Config, logger: Logger): Promise<McpConfig | undefined | 'refused'> {
  if (!config.tools.mcpConfigPath) return undefined;
  try {
    return await loadMcpConfig(config.tools.mcpConfigPath, process.env, SECRET_ENV_NAMES);
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    if (!config.tools.mcpOptional) {
      process.stderr.write(`${error.message}\nFix it, or set MCP_OPTIONAL=true to start without its tools.\n`);
      return 'refused';
    }
    logger.warn(`STARTING WITHOUT ANY MCP TOOLS (MCP_OPTIONAL=true): ${error.message}`);
    return undefined;
  }
}

function parseCommandLine() {
  return parseArgs({ allowPositionals: true, options: { session: { type: 'string', default: 'console' }, help: { type: 'boolean', short: 'h' } } });
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = secretMasker(secretsOf())(error instanceof Error ? error.message : String(error));
    process.stderr.write(`Spool could not start: ${message}\n`);
    process.exit(1);
  },
);
