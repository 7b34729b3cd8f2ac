import 'dotenv/config';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { consoleOutbound, runConsole, welcomeLine } from './adapters/console/console-adapter.ts';
import { ConsoleScreen } from './adapters/console/screen.ts';
import { secretsOf, type Config } from './config.ts';
import { Agent } from './core/agent/agent.ts';
import type { Logger } from './core/logger.ts';
import { observers } from './core/agent/hooks.ts';
import { DeliveryEngine } from './core/delivery/engine/engine.ts';
import { errorMessage } from './core/errors.ts';
import type { PlatformAdapter } from './core/ports/platform/platform.ts';
import { secretMasker } from './core/redact.ts';
import { TaskLedger } from './store/delivery/task-ledger.ts';
import { getContinuationTool } from './core/builtins/get-continuation.ts';
import { OpenAiChatClient } from './llm/openai-client.ts';
import { windowLine } from './llm/context-window.ts';
import { fileReader } from './files/file-reader.ts';
import { createLogger, logAgentEvents } from './logging.ts';
import {
  agentMetrics,
  observabilityRoutes,
  gatewayMetrics,
  jsonRoute,
  Readiness,
  replyMetrics,
  serveRoutes,
  type HttpEndpoint,
} from './observability.ts';
import { proxyFromEnv } from './proxy.ts';
import { startTracing } from './tracing.ts';
import { openDatabase, type Database } from './store/database.ts';
import { abandonEmbeddedStart } from './store/embedded-start.ts';
import { DeliveryLedger } from './store/delivery/delivery-ledger.ts';
import { GatewayLedger } from './store/delivery/gateway-ledger.ts';
import { deliveryLedgers } from './store/delivery/ledgers.ts';
import { HistorySearch } from './store/transcripts/history-search.ts';
import { ResultIndexer } from './store/transcripts/result-index.ts';
import { TranscriptStore } from './store/transcripts/transcript-store.ts';
import type { McpConfig } from './tools/mcp/config/config.ts';
import { httpPortOf, readMcpConfig, readSettings, uncheckedSignIns } from './startup-settings.ts';
import { runMcpLogin } from './mcp-login.ts';
import { signInRoutes } from './tools/mcp/sign-in/sign-in-routes.ts';
// The MCP SDK and its schemas take about 100 ms of a start to load: the modules using it are
// imported only where MCP servers, OAuth or sign-ins are configured.
import type { McpToolSource, McpOAuthOptions } from './tools/mcp/source.ts';
import { SealedOAuthVault } from './store/credentials/oauth-vault.ts';
import { SealedPersonVault } from './store/credentials/person-vault.ts';
import type { PlatformSignIn } from './core/ports/platform/platform-sign-in.ts';
import { builtinSource, ToolRegistry, type ToolSource } from './tools/registry.ts';
import { searchHistoryTool } from './core/builtins/search-history.ts';
import { findToolsTool } from './core/builtins/find-tools.ts';
import { loadToolsTool } from './core/builtins/load-tools.ts';
import type { ChannelAccess } from './core/ports/platform/channel-access.ts';
import { webRoutes } from './web/routes.ts';
import { openWeb, printLocalAddress, resultPages } from './web-wiring.ts';

async function main(): Promise<number> {
  const settings = readSettings();
  if (typeof settings === 'number') return settings;
  const { args, positionals, config } = settings;
  const consoleMode = positionals[0] === 'chat' || (!config.slack && !config.discord);
  // At a terminal, log lines are drawn above the prompt and "thinking…", never into them.
  const screen =
    consoleMode && process.stdin.isTTY && process.stderr.isTTY
      ? new ConsoleScreen(process.stderr)
      : undefined;
  const logger: Logger = createLogger({
    level: config.server.logLevel,
    format: config.server.logFormat,
    secrets: secretsOf(),
    stream: screen?.logStream,
  });
  const mcp = await readMcpConfig(config, logger);
  if (mcp === 'refused') return 2;
  if (positionals[0] === 'mcp') return runMcpLogin(positionals.slice(1), config, mcp, logger);

  // /healthz answers from here on; /readyz once the database and every platform are ready.
  const registry = new Registry();
  const platformNames = consoleMode
    ? []
    : [config.slack && 'slack', config.discord && 'discord'].filter(
        (name): name is string => !!name,
      );
  const unchecked = await uncheckedSignIns(config, mcp, platformNames);
  if (unchecked) {
    logger.error(unchecked);
    return 2;
  }
  const readiness = new Readiness(['database', ...platformNames]);
  const httpPort = httpPortOf(config, platformNames, consoleMode);
  // People's sign-ins land on this server; they are completed once the database is open.
  const opened: { spool?: Spool } = {};
  const endpoint =
    httpPort === undefined
      ? undefined
      : await serveRoutes(
          httpPort,
          await httpRoutes(config, registry, readiness, () => opened.spool),
          httpPort === 0 ? '127.0.0.1' : undefined,
        );

  const around = { registry, readiness, platformNames, endpoint };
  const spool = await openSpool(config, mcp, logger, around);
  opened.spool = spool;
  readiness.details = spool.mcpStatus;
  readiness.set('database', () =>
    spool.db.pool.query('SELECT 1').then(
      () => true,
      () => false,
    ),
  );
  try {
    if (consoleMode) {
      printLocalAddress(spool.web, config, endpoint, logger);
      return await runConsoleMode(spool, config, args.session, screen);
    }
    const platforms = await startPlatforms(
      await configuredPlatforms(config, spool, registry, logger),
      readiness,
      endpoint,
      logger,
      spool.access,
    );
    if (platforms.length === 0) return 1;
    spool.delivery.start();
    const stopPruning = pruneDaily(spool, config.store.retentionDays, logger);
    await untilSignal();
    stopPruning();
    // Still receiving while turns finish: what arrives now is stored for the next start or another
    // replica.
    logger.info('Shutting down');
    await spool.delivery.stop(config.delivery.shutdownGraceMs);
    await Promise.allSettled(platforms.map((p) => p.stop()));
    return 0;
  } finally {
    endpoint?.server.close();
    await spool.close();
  }
}

/** Health, readiness and metrics; Spool's OAuth client metadata document where it has an address. */
async function httpRoutes(
  config: Config,
  registry: Registry,
  readiness: Readiness,
  spool: () => Spool | undefined,
) {
  const { clientMetadataUrl } = config.tools.oauth;
  const document = clientMetadataUrl
    ? (await import('./tools/mcp/sign-in/oauth.ts')).clientMetadataDocument({
        ...config.tools.oauth,
        clientMetadataUrl,
      })
    : undefined;
  return [
    ...observabilityRoutes(registry, readiness),
    ...(document ? [jsonRoute(new URL(document.client_id).pathname, document)] : []),
    ...signInRoutes(() => spool()?.signIns),
    ...webRoutes(() => spool()?.web),
  ];
}

/** The MCP servers, as one tool source; none when they cannot be started at all. */
async function startMcp(
  mcp: McpConfig,
  db: Database,
  config: Config,
  logger: Logger,
  oauth: McpOAuthOptions,
): Promise<McpToolSource | undefined> {
  const { McpToolSource } = await import('./tools/mcp/source.ts');
  try {
    return await McpToolSource.start(mcp, logger, config.tools, oauth, new TaskLedger(db.prisma));
  } catch (error) {
    logger.error(`MCP tools disabled: ${errorMessage(error)}`);
    return undefined;
  }
}

/** What the bot runs beside: its metrics and readiness, its platforms, its HTTP server. */
interface Around {
  registry: Registry;
  readiness: Readiness;
  platformNames: string[];
  endpoint?: HttpEndpoint;
}

/** The database, the tools, the model, the agent and the delivery engine over them. */
async function openSpool(
  config: Config,
  mcp: McpConfig | undefined,
  logger: Logger,
  { registry, readiness, platformNames, endpoint }: Around,
) {
  // The embedded server lost for good: one line, and a non-zero exit for the supervisor to act on.
  const onLost = (reason: string) => {
    logger.error(`Exiting: ${reason}`);
    process.exit(1);
  };
  const tracing = await startTracing(config.tracing, logger);
  const llm = new OpenAiChatClient({ ...config.openai, dispatcher: proxyFromEnv() });
  // The database server, a process of its own, is started first; the model server is asked while
  // it starts.
  const opening = openDatabase({ ...config.store, logger, onLost });
  const modelChecked = checkModel(llm, config, logger);
  const db = await opening;
  logger.info(`Database: ${db.description}`);
  const store = new TranscriptStore(db, { leaseMs: config.delivery.leaseMs });
  // Tool results are indexed for search in the background, off the turn.
  const indexer = new ResultIndexer(db, logger);
  indexer.start();
  const search = new HistorySearch(db.prisma, indexer);
  const sources: ToolSource[] = [
    builtinSource([
      searchHistoryTool(search),
      getContinuationTool(store, config.agent.pages),
      // Offered only past TOOL_SCHEMAS_MAX_TOKENS, with a catalogue of the registry's tools.
      loadToolsTool(() => tools.list()),
      // Offered in load_tools' place past TOOL_CATALOGUE_MAX_TOOLS: a search of the same tools.
      findToolsTool(() => tools.list()),
    ]),
  ];
  const platforms = await platformSignIns(config, platformNames);
  const oauth = await mcpOAuth(config, mcp, db, logger, platforms, (id) => delivery.wake(id));
  const { signIns } = oauth;
  const mcpSource = mcp && (await startMcp(mcp, db, config, logger, oauth));
  if (mcpSource) sources.push(mcpSource);
  const tools = new ToolRegistry(sources);
  await modelChecked;
  const ledger = new DeliveryLedger(db);
  const agent = new Agent(
    {
      llm: tracing.llm(llm, config.openai),
      tools: tracing.tools(tools),
      store,
      logger,
      hooks: observers(agentMetrics(registry, ledger), logAgentEvents(logger)),
    },
    config.agent.loop,
  );
  const windowProblem = await llm.windowProblem(agent.emptyRequest());
  if (windowProblem) logger.warn(windowProblem);
  // Nobody else can reach the embedded database: leases left by a killed run are ours to take now.
  if (db.embedded) await ledger.releaseAll();
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const delivery = new DeliveryEngine(
    {
      agent: tracing.turns(agent),
      ledger,
      search,
      files: fileReader({ binaryMaxBytes: config.tools.binaryMaxBytes }),
      ...deliveryLedgers(db),
      cancelTasks: (conversation) => tools.cancelTasks(conversation),
      prompts: mcpSource,
      signIns,
      mask: secretMasker(secretsOf()),
      logger,
      onAnswered: replyMetrics(registry),
    },
    { holder, ...config.delivery, ...resultPages(config, endpoint, platformNames) },
  );
  const close = async () => {
    await tools.close();
    await indexer.stop();
    await db.close();
    await tracing.shutdown();
  };
  const mcpStatus = () => mcpSource?.status() ?? [];
  const access = new Map<string, ChannelAccess>();
  const bot = { platforms, access, search, logger, delivery, holder, readiness };
  const web = openWeb(config, db, { ...bot, mcpSource });
  return { db, agent, ledger, delivery, holder, mcpStatus, signIns, web, access, close };
}

type Spool = Awaited<ReturnType<typeof openSpool>>;

/** Whether the model server answers as configured, and its window; logged, never thrown. */
async function checkModel(llm: OpenAiChatClient, config: Config, logger: Logger): Promise<void> {
  const endpointProblem = config.openai.startupCheck ? await llm.checkEndpoint() : undefined;
  if (endpointProblem) logger.warn(`Model endpoint check, starting anyway: ${endpointProblem}`);
  // The server's own word on its window, from the listing just fetched and its own routes; with
  // the check skipped, nothing is asked and the known model's window or the default stands.
  logger.info(windowLine(config.openai.startupCheck ? await llm.learnWindow() : llm.contextWindow));
}

/**
 * Where MCP servers' OAuth state is kept, and people's sign-ins to the servers used with each
 * person's own account (none without such a server or without PUBLIC_URL, the address their
 * browser comes back to). A sign-in wakes the call parked on it (`onSignedIn`), on whichever replica
 * takes its lane.
 */
async function mcpOAuth(
  config: Config,
  mcp: McpConfig | undefined,
  db: Database,
  logger: Logger,
  platforms: Record<string, PlatformSignIn | 'local'>,
  onSignedIn: (toolCallId: string) => Promise<void>,
): Promise<McpOAuthOptions> {
  const { signInRedirectUrl, signInLinkUrl, clientMetadataUrl, key } = config.tools.oauth;
  const people = mcp ? (await import('./tools/mcp/sign-in/cross-app.ts')).signInServers(mcp) : [];
  const signIns =
    signInRedirectUrl && signInLinkUrl && people.length > 0
      ? new (await import('./tools/mcp/sign-in/sign-in.ts')).SignIns(people, {
          vault: new SealedPersonVault(db.prisma, key),
          identity: { redirectUrl: signInRedirectUrl, clientMetadataUrl },
          linkUrl: signInLinkUrl,
          platforms,
          onSignedIn,
          logger,
          // A link lasts as long as the call waits for it.
          linkMs: config.delivery.questionTimeoutMs,
        })
      : undefined;
  return { vault: new SealedOAuthVault(db.prisma, key), identity: config.tools.oauth, signIns };
}

/**
 * Each running platform's own sign-in, that checks who follows a sign-in link; the console's one
 * person is at this machine. Loaded only for a platform that runs.
 */
async function platformSignIns(
  config: Config,
  platformNames: string[],
): Promise<Record<string, PlatformSignIn | 'local'>> {
  const platforms: Record<string, PlatformSignIn | 'local'> = { console: 'local' };
  const dispatcher = proxyFromEnv();
  const { slack, discord } = config;
  if (platformNames.includes('slack') && slack?.clientId && slack.clientSecret) {
    const { SignInWithSlack } = await import('./adapters/slack/sign-in-with-slack.ts');
    const { clientId, clientSecret, apiUrl } = slack;
    platforms.slack = new SignInWithSlack({ clientId, clientSecret, apiUrl, dispatcher });
  }
  if (platformNames.includes('discord') && discord?.clientSecret) {
    const { DiscordSignIn } = await import('./adapters/discord/discord-sign-in.ts');
    const { applicationId, clientSecret, apiUrl } = discord;
    platforms.discord = new DiscordSignIn({ applicationId, clientSecret, apiUrl, dispatcher });
  }
  return platforms;
}

/**
 * The console chat, to the end of its input; the exit status says whether every turn was answered.
 */
async function runConsoleMode(
  spool: Spool,
  config: Config,
  session: string,
  screen: ConsoleScreen | undefined,
): Promise<number> {
  const io = { input: process.stdin, output: process.stdout, screen };
  spool.delivery.register('console', consoleOutbound(io));
  spool.delivery.start();
  // A signal ends the input like end of file does: the reply under way is finished, the database
  // shut down.
  const stopInput = new AbortController();
  void untilSignal().then(() => stopInput.abort());
  const welcome = welcomeLine({
    model: config.openai.model,
    database: spool.db.description,
    tools: spool.agent.emptyRequest().tools.length,
  });
  const failedTurns = await runConsole(spool.delivery, {
    session,
    signal: stopInput.signal,
    welcome,
    ...io,
  });
  await spool.delivery.stop(config.delivery.shutdownGraceMs);
  // Every reply was printed; a failed turn still makes the exit status say so, for scripts.
  return failedTurns > 0 ? 1 : 0;
}

/**
 * Each configured platform; its SDK is loaded only then, since Bolt and discord.js take seconds to
 * import.
 */
async function configuredPlatforms(
  config: Config,
  { delivery, db, holder }: Pick<Spool, 'delivery' | 'db' | 'holder'>,
  registry: Registry,
  logger: Logger,
): Promise<PlatformAdapter[]> {
  const dispatcher = proxyFromEnv();
  const platforms: PlatformAdapter[] = [];
  if (config.slack)
    platforms.push(
      new (await import('./adapters/slack/slack-adapter.ts')).SlackAdapter(
        // Where replies may unfurl is the channel's policy, as the engine reads it.
        {
          ...config.slack,
          dispatcher,
          policy: config.delivery.policy,
          ...(await import('./slack-installs.ts')).slackInstallStores(
            config,
            db.prisma,
            dispatcher,
            logger,
          ),
        },
        delivery,
        logger,
      ),
    );
  if (config.discord)
    platforms.push(
      new (await import('./adapters/discord/discord-adapter.ts')).DiscordAdapter(
        {
          ...config.discord,
          dispatcher,
          // Which emoji ask something is the channel's policy, as the engine reads it.
          policy: config.delivery.policy,
          // The gateway's shards shared with the other replicas through the database.
          sharding: {
            ...config.discord.shards,
            gateway: new GatewayLedger(db),
            holder,
            onEvent: gatewayMetrics(registry),
          },
        },
        delivery,
        logger,
      ),
    );
  return platforms;
}

/**
 * Starts each platform; one failing to connect (a revoked token, an outage) must not take the
 * others down.
 */
async function startPlatforms(
  configured: PlatformAdapter[],
  readiness: Readiness,
  endpoint: HttpEndpoint | undefined,
  logger: Logger,
  access: Map<string, ChannelAccess>,
): Promise<PlatformAdapter[]> {
  const started: PlatformAdapter[] = [];
  for (const platform of configured) {
    try {
      await platform.start();
      started.push(platform);
      readiness.set(platform.name.toLowerCase(), () => platform.ready());
      const handler = platform.httpHandler?.();
      if (handler) endpoint?.mount(handler, platform.httpPath);
      const channels = platform.channelAccess?.();
      if (channels) access.set(platform.name.toLowerCase(), channels);
    } catch (error) {
      logger.error(`${platform.name} could not start: ${errorMessage(error)}`);
      // Stopping what half started; its own failure says nothing more than the line above.
      await platform.stop().catch(() => {});
    }
  }
  return started;
}

/** The inbox kept to its retention: pruned now and each day after; returns how to stop. */
function pruneDaily(spool: Spool, retentionDays: number, logger: Logger): () => void {
  const prune = () =>
    spool.ledger
      .prune(retentionDays)
      .catch((error: unknown) =>
        logger.warn('Could not prune the inbox', { error: errorMessage(error) }),
      );
  void prune();
  const pruning = setInterval(prune, 86_400_000).unref();
  return () => clearInterval(pruning);
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

// A database server begun by the entry (start.ts) and never opened is stopped before the exit.
main()
  .catch((error: unknown) => {
    const message = secretMasker(secretsOf())(errorMessage(error));
    process.stderr.write(`Spool could not start: ${message}\n`);
    return 1;
  })
  .then(async (code) => {
    await abandonEmbeddedStart();
    process.exit(code);
  });
