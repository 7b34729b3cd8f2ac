import {
  Client,
  UnauthorizedError,
  type ElicitRequest,
  type OAuthClientProvider,
  type Prompt as McpPrompt,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import type {
  ApplicationInputRequest,
  TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import type { Logger } from '../../core/logger.ts';
import type { TaskPort } from '../../core/ports/parked/tasks.ts';
import type { ParkedCall, ToolContext, ToolOutcome, ToolProgress } from '../../core/ports/tools.ts';
import { CallClock } from './call-clock.ts';
import { ServerQuestions, type RunningCall } from './server-requests/questions.ts';
import { errorResult } from '../../core/ports/tools.ts';
import type { McpServerConfig } from './config/config.ts';
import { loginCommand, StoredOAuthProvider } from './sign-in/oauth.ts';
import { PersonOAuthProvider } from './sign-in/person-oauth.ts';
import { toOutcome } from './result.ts';
import { listedResources, promptText, resourceOutcome } from './prompts-and-resources.ts';
import { ServerSkills } from './skills.ts';
import { answerSampling } from './server-requests/sampling.ts';
import { failedCall } from './call-failure.ts';
import { cancelTask } from './tasks/tasks.ts';
import { runAsTask, taskCallFor } from './tasks/task-run.ts';
import { cancelInSession, openTaskSession } from './tasks/tasks-extension.ts';
import { connectTransport } from './transport.ts';
import { withTraceContext } from '../../tracing/propagation.ts';
import { errorMessage } from '../../core/errors.ts';

type ConnectionState = 'connecting' | 'ready' | 'down' | 'needs_login' | 'closed';

/**
 * How much of a server's output Spool takes in: one stdio message, and the bytes of one binary part
 * it keeps.
 */
export interface McpLimits {
  maxMessageBytes: number;
  binaryMaxBytes: number;
}

/**
 * What Spool tells a server it does: forms (with the schema's defaults filled in) and pages to open
 * (URL mode); its model (sampling, with tools) and roots where mcp.json offers them to that server.
 */
const capabilitiesOf = ({ sampling, roots }: McpServerConfig) => ({
  elicitation: { form: { applyDefaults: true }, url: {} },
  ...(sampling ? { sampling: { tools: {} } } : {}),
  ...(roots ? { roots: { listChanged: false } } : {}),
});
/** Far past any call's own limits (CallClock): the SDK's timer never decides. */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/**
 * One MCP server: connects, keeps its tool list, and reconnects with exponential backoff when
 * the server dies. The last known tool list stays visible during an outage so the model's tools
 * do not vanish mid-conversation; calls then get an error result at once.
 */
export class McpServerConnection {
  state: ConnectionState = 'connecting';
  tools: McpTool[] = [];
  /** The prompts the server offers people (its first page); none when it offers none. */
  prompts: McpPrompt[] = [];
  /** The resources the server lists (its first page), when it serves resources at all. */
  resources?: Array<{ uri: string; name?: string }>;
  /** The skills the server offers (SEP-2640), listed, none read; none when it offers none. */
  skills?: ServerSkills;
  /** The protocol version the server speaks, once connected: 2025-11-25, 2026-07-28… */
  protocolVersion?: string;
  /** The SDK's era of that version, once connected. */
  era?: string;
  private client?: Client;
  /** The tasks extension's session, with a 2026-07-28 server that declares it. */
  private taskSession?: TaskEnabledSession<RunningCall>;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer?: NodeJS.Timeout;
  private opening?: Promise<void>;
  /** The OAuth client of the connection up now. */
  private authInUse?: OAuthClientProvider;
  private readonly running = new Set<RunningCall>();
  private readonly questions: ServerQuestions;

  constructor(
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly clientInfo: { name: string; version: string },
    private readonly limits: McpLimits,
    /**
     * An HTTP server's OAuth client, or how to choose one at each connection (the listing
     * connection of a server used with each person's sign-in); none for stdio or a static
     * Authorization header.
     */
    private readonly auth?: OAuthClientProvider | (() => Promise<OAuthClientProvider>),
    /**
     * One person's connection (`"identity": "person"`): opened when a call needs it, never retried
     * on its own, and a refused authorization is thrown to the caller, who asks the person to sign in.
     */
    private readonly personal = false,
    /** Where the tasks calls became are kept; without it no call runs as a task. */
    private readonly tasks?: TaskPort,
  ) {
    this.questions = new ServerQuestions(config, this.running, logger);
  }

  /**
   * Whether its tools are listed with a person's identity provider sign-in, exchanged (cross-app
   * access), rather than an operator's login.
   */
  private get crossApp(): boolean {
    return this.config.kind === 'http' && this.config.oauth?.grant === 'cross_app_access';
  }

  /** Why the server cannot be used, in words for an operator (/readyz); none when it can. */
  get problem(): string | undefined {
    if (this.state === 'needs_login')
      return `needs login (${this.crossApp ? 'a sign-in to the identity provider' : loginCommand(this.config.name)})`;
    if (this.state === 'down') return 'unavailable';
    return undefined;
  }

  /**
   * How the server is, for an operator (/readyz): the protocol version it speaks and the tools it
   * offers, or why it cannot be used.
   */
  get status(): string {
    if (this.state === 'ready')
      return `ready, MCP ${this.protocolVersion}, ${this.tools.length} tools`;
    return this.problem ?? this.state;
  }

  /** Resolves after the first attempt, whether or not it succeeded. */
  async start(): Promise<void> {
    await this.connect();
  }

  private unavailable(): ToolOutcome {
    return errorResult(
      this.state === 'needs_login'
        ? `MCP server "${this.config.name}" needs an operator to log in (${loginCommand(this.config.name)}); its tools cannot be used until then.`
        : `MCP server "${this.config.name}" is unavailable right now (it stopped and is being restarted). Try again shortly.`,
    );
  }

  private closed(): boolean {
    return this.state === 'closed';
  }

  private allowed(tool: McpTool): boolean {
    const { allowedTools, blockedTools } = this.config;
    return (
      (!allowedTools || allowedTools.includes(tool.name)) && !blockedTools?.includes(tool.name)
    );
  }

  /**
   * A client for one connection. List changes reach it in either era (a 2026-07-28 server's through
   * `subscriptions/listen`), and are followed at once.
   */
  private newClient(): Client {
    const client: Client = new Client(this.clientInfo, {
      capabilities: capabilitiesOf(this.config),
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (this.client !== client) return;
            if (error) this.listFailed('tools', error);
            else this.offer(tools ?? []);
          },
        },
        prompts: {
          debounceMs: 0,
          onChanged: (error, prompts) => {
            if (this.client !== client) return;
            if (error) this.listFailed('prompts', error);
            else this.prompts = prompts ?? [];
          },
        },
      },
    });
    client.onclose = () => this.lost(client);
    client.setRequestHandler('elicitation/create', ({ params }) => this.questions.elicit(params));
    client.setNotificationHandler('notifications/elicitation/complete', ({ params }) =>
      this.questions.pageDone(params.elicitationId),
    );
    const { sampling, roots } = this.config;
    if (sampling)
      client.setRequestHandler('sampling/createMessage', ({ params }) =>
        answerSampling(params, this.running, sampling),
      );
    if (roots) client.setRequestHandler('roots/list', () => ({ roots }));
    return client;
  }

  private async connect(): Promise<void> {
    if (this.closed()) return;
    try {
      await this.attempt();
    } catch (error) {
      if (error instanceof UnauthorizedError) this.waitForLogin();
      else this.scheduleReconnect(`could not start: ${errorMessage(error)}`);
    }
  }

  /**
   * A person's connection, opened now if it is not: throws what stopped it (UnauthorizedError when
   * the person has to sign in).
   */
  async open(): Promise<void> {
    if (this.state === 'ready' && this.client) return;
    if (this.closed()) throw new Error(`MCP server "${this.config.name}": connection closed`);
    // Two calls at once share one attempt.
    this.opening ??= this.attempt()
      .catch((error: unknown) => {
        if (!this.closed()) this.state = 'down';
        throw error;
      })
      .finally(() => (this.opening = undefined));
    return this.opening;
  }

  /** One attempt to connect and list; throws what stopped it, leaving nothing open. */
  private async attempt(): Promise<void> {
    const client = this.newClient();
    try {
      const auth = typeof this.auth === 'function' ? await this.auth() : this.auth;
      // Another process (mcp login) may have logged in since the last attempt.
      if (auth instanceof StoredOAuthProvider) await auth.reload();
      await connectTransport(
        client,
        this.config,
        this.limits.maxMessageBytes,
        (line) => this.logger.debug(`[mcp:${this.config.name}] ${line}`),
        auth,
      );
      this.client = client;
      this.authInUse = auth;
      this.offer((await client.listTools()).tools);
      this.taskSession = this.tasks ? this.openTaskSession(client) : undefined;
      this.resources = client.getServerCapabilities()?.resources
        ? await listedResources(client, this.config, this.logger)
        : undefined;
      await this.refreshPrompts(client);
      this.skills = await ServerSkills.list(client, this.config.name, this.logger);
      // close() may have run while we were connecting.
      if (this.closed()) return void (await client.close());
      this.state = 'ready';
      this.retryMs = FIRST_RETRY_MS;
      this.protocolVersion = client.getNegotiatedProtocolVersion();
      this.era = client.getProtocolEra();
      this.logger.info(
        `MCP server "${this.config.name}" ready with ${this.tools.length} tools, MCP ${this.protocolVersion}`,
        {
          server: this.config.name,
          protocolVersion: this.protocolVersion,
          era: this.era,
        },
      );
    } catch (error) {
      this.client = undefined;
      this.endTaskSession();
      client.onclose = undefined;
      // The connection never came up: closing what is left of it has nothing to report.
      await client.close().catch(() => {});
      throw error;
    }
  }

  /** Someone has just signed in: a server waiting for a login is tried again now. */
  retryLogin(): void {
    if (this.state !== 'needs_login') return;
    clearTimeout(this.retryTimer);
    void this.connect();
  }

  /**
   * Said once, then checked every MAX_RETRY_MS: an operator's login lands in the vault, which the
   * next attempt reads.
   */
  private waitForLogin(): void {
    if (this.closed()) return;
    if (this.state !== 'needs_login')
      this.logger.error(
        this.crossApp
          ? `MCP server "${this.config.name}" lists its tools once someone has signed in to the identity provider`
          : `MCP server "${this.config.name}" needs an operator to log in: run ${loginCommand(this.config.name)}`,
      );
    this.state = 'needs_login';
    this.retryTimer = setTimeout(() => void this.connect(), MAX_RETRY_MS);
    this.retryTimer.unref();
  }

  /**
   * The tools listed that Spool offers: those mcp.json allows, and none that runs only as a task
   * where Spool keeps no tasks.
   */
  private offer(tools: McpTool[]): void {
    const taskOnly = this.tasks
      ? []
      : tools.filter((t) => t.execution?.taskSupport === 'required').map((t) => t.name);
    if (taskOnly.length > 0) {
      this.logger.info(
        `MCP server "${this.config.name}": not offering ${taskOnly.join(', ')}, which run only as tasks`,
      );
    }
    this.tools = tools.filter((t) => this.allowed(t) && !taskOnly.includes(t.name));
  }

  private listFailed(what: 'tools' | 'prompts', error: unknown): void {
    this.logger.warn(
      `MCP server "${this.config.name}" did not list its ${what}: ${errorMessage(error)}`,
    );
  }

  /**
   * With a server that declares the tasks extension, its calls go through the extension's session:
   * their questions come back to the call that made them.
   */
  private openTaskSession(client: Client): TaskEnabledSession<RunningCall> | undefined {
    return openTaskSession<RunningCall>(client, {
      server: this.config.name,
      clientInfo: this.clientInfo,
      capabilities: capabilitiesOf(this.config),
      tools: () => this.tools,
      input: (request, call) => this.answer(request, call),
      onError: (error) =>
        this.logger.warn(`MCP server "${this.config.name}" tasks: ${errorMessage(error)}`),
    });
  }

  private endTaskSession(): void {
    void this.taskSession?.close();
    this.taskSession = undefined;
  }

  /** A question of a call made through the tasks extension, which says whose call it is. */
  private async answer(request: ApplicationInputRequest, call: RunningCall): Promise<unknown> {
    const { sampling, roots } = this.config;
    if (request.kind === 'elicitation')
      return this.questions.ask(call, request.params as unknown as ElicitRequest['params']);
    if (request.kind === 'sampling' && sampling)
      return answerSampling(request.params as never, [call], sampling);
    if (request.kind === 'roots' && roots) return { roots };
    throw new Error(`Spool does not offer ${request.kind} to MCP server "${this.config.name}"`);
  }

  private lost(client: Client): void {
    if (this.client !== client || this.closed()) return;
    this.client = undefined;
    this.endTaskSession();
    // A person's connection is opened again by their next call.
    if (this.personal) this.state = 'down';
    else this.scheduleReconnect('stopped');
  }

  private scheduleReconnect(reason: string): void {
    if (this.closed()) return;
    this.state = 'down';
    this.logger.warn(
      `MCP server "${this.config.name}" ${reason}; retrying in ${this.retryMs / 1000} s`,
    );
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    context: Pick<
      ToolContext,
      'signal' | 'onProgress' | 'askForm' | 'askModel' | 'callId' | 'conversation'
    >,
  ): Promise<ToolOutcome | ParkedCall> {
    const client = this.client;
    const task = context.callId ? await this.tasks?.open(context.callId) : undefined;
    // A task outlives its server's connection: it is looked at again once the server is back.
    if (task && (this.state !== 'ready' || !client))
      return { parked: 'task', until: new Date(Date.now() + FIRST_RETRY_MS * 5) };
    if (this.state !== 'ready' || !client) return this.unavailable();
    const clock = new CallClock(this.config.timeoutMs, this.config.maxTimeoutMs, context.signal);
    const call: RunningCall = {
      askForm: context.askForm,
      askModel: context.askModel,
      sampled: 0,
      clock,
      pages: new Map(),
    };
    this.running.add(call);
    try {
      const auth = this.authInUse;
      if (auth instanceof StoredOAuthProvider || auth instanceof PersonOAuthProvider)
        await auth.refreshIfExpiring();
      // With `onprogress` the SDK sends a progressToken; each progress notification restarts the
      // call's idle time.
      const options = {
        signal: clock.signal,
        timeout: NO_SDK_TIMEOUT,
        onprogress: ({ progress, total, message }: ToolProgress) => {
          clock.heard();
          context.onProgress?.({
            progress,
            ...(total === undefined ? {} : { total }),
            ...(message ? { message } : {}),
          });
        },
      };
      const params = withTraceContext({ name: tool, arguments: args });
      const taskCall =
        this.tasks && context.callId
          ? taskCallFor(client, this.taskSession, this.tools, {
              params,
              call,
              options,
              stored: task,
              onStatus: (message) => context.onProgress?.({ progress: 0, message }),
            })
          : undefined;
      if (taskCall)
        return await runAsTask(
          taskCall,
          {
            tasks: this.tasks!,
            server: this.config.name,
            tool,
            toolCallId: context.callId!,
            conversation: context.conversation,
            signal: context.signal,
            binaryMaxBytes: this.limits.binaryMaxBytes,
          },
          task,
        );
      // With tracing on, the call carries its trace in `_meta` too, as MCP asks (SEP-414).
      const result = await client.callTool(params, options);
      return toOutcome(result, this.limits.binaryMaxBytes);
    } catch (error) {
      return failedCall(this.config, this.personal, tool, error, context.signal);
    } finally {
      for (const done of call.pages.values()) done();
      clock.stop();
      this.running.delete(call);
    }
  }

  /** Cancels a task this server runs; the caller marks it ended. */
  async cancel(taskId: string): Promise<void> {
    if (this.taskSession) await cancelInSession(this.taskSession, taskId);
    else if (this.client) await cancelTask(this.client, taskId);
  }

  private async refreshPrompts(client: Client): Promise<void> {
    if (!client.getServerCapabilities()?.prompts) return;
    try {
      this.prompts = (await client.listPrompts()).prompts;
    } catch (error) {
      this.listFailed('prompts', error);
    }
  }

  /** A prompt's messages as the text of one message; throws when the server cannot give it. */
  async prompt(name: string, args: Record<string, string>): Promise<string> {
    const client = this.client;
    if (this.state !== 'ready' || !client) throw new Error(this.problem ?? 'not connected');
    return promptText(client, this.config, name, args);
  }

  /** A resource by its URI (a resource_link a tool returned, or one the server lists). */
  async readResource(uri: string, signal: AbortSignal): Promise<ToolOutcome> {
    const client = this.client;
    if (this.state !== 'ready' || !client) return this.unavailable();
    return resourceOutcome(client, this.config, uri, signal, this.limits.binaryMaxBytes);
  }

  async close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.endTaskSession();
    await client?.close();
  }
}
