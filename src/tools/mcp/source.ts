import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ConversationKey } from '../../core/ports/conversation.ts';
import type { PromptPort, PromptSpec } from '../../core/ports/prompts.ts';
import type { TaskPort } from '../../core/ports/parked/tasks.ts';
import { errorResult, type Tool, type ToolFlags } from '../../core/ports/tools.ts';
import type { ToolSource } from '../registry.ts';
import type { McpConfig, McpServerConfig } from './config/config.ts';
import { McpServerConnection, type McpLimits } from './connection.ts';
import { exposedToolNames } from './naming.ts';
import {
  oauthProvider,
  StoredOAuthProvider,
  type OAuthIdentity,
  type OAuthVault,
} from './sign-in/oauth.ts';
import { crossAppAccess, IdentityProvider } from './sign-in/cross-app.ts';
import { ownSignIn, PersonConnections } from './sign-in/person-connections.ts';
import { personServers, type SignIns } from './sign-in/sign-in.ts';
import { LOAD_SKILL, skillLoader } from './skills.ts';

export const CLIENT_INFO = { name: 'spool', version: '0.1.0' };

/** Where OAuth state is kept and how Spool presents itself to authorization servers. */
export interface McpOAuthOptions {
  vault: OAuthVault;
  identity: OAuthIdentity;
  /**
   * People's sign-ins, for the servers used with each person's own account; without it (no
   * PUBLIC_URL) such servers are left off.
   */
  signIns?: SignIns;
}
/** The tool Spool adds for a server that serves resources: `<server>__read_resource`. */
const READ_RESOURCE = 'read_resource';
/** How many of a server's listed resources its read_resource tool names. */
const LISTED_RESOURCES = 20;

/**
 * What the server's annotations say of repeating a call, and the operator's word
 * (`idempotentTools`): whether a call whose outcome is unknown may be sent again. Annotations are
 * hints; `destructiveHint` does not change that decision (a call that only adds something must not
 * be repeated either), so it is not carried.
 */
function repeatFlags(
  tool: McpServerConnection['tools'][number],
  config: McpServerConfig,
): ToolFlags {
  const { readOnlyHint, idempotentHint } = tool.annotations ?? {};
  return {
    ...(readOnlyHint === true ? { readOnly: true } : {}),
    ...(idempotentHint === true || config.idempotentTools?.includes(tool.name)
      ? { idempotent: true }
      : {}),
  };
}

function serverTool(
  connection: McpServerConnection,
  tool: McpServerConnection['tools'][number],
  people: PersonConnections | undefined,
): Tool {
  return {
    spec: {
      name: tool.name,
      description:
        tool.description ?? tool.title ?? `${tool.name} (MCP server ${connection.config.name})`,
      parameters: { ...tool.inputSchema, type: 'object' },
      flags: repeatFlags(tool, connection.config),
    },
    // A server used with each person's own sign-in is only listed with Spool's connection.
    run: (args, context) =>
      people ? people.call(tool.name, args, context) : connection.call(tool.name, args, context),
  };
}

/** resources/read as a tool, offered (and allowed by a channel's policy) like the server's own. */
function resourceReader(connection: McpServerConnection): Tool {
  const listed = (connection.resources ?? []).slice(0, LISTED_RESOURCES);
  const names = listed.map((r) => (r.name ? `${r.uri} (${r.name})` : r.uri)).join(', ');
  return {
    spec: {
      name: READ_RESOURCE,
      description:
        `Read a resource of MCP server "${connection.config.name}" by its URI: a resource link one of its tools returned, or one it lists.` +
        (names ? ` It lists: ${names}.` : ''),
      parameters: {
        type: 'object',
        properties: { uri: { type: 'string', description: 'The URI of the resource.' } },
        required: ['uri'],
        additionalProperties: false,
      },
      flags: { readOnly: true },
    },
    run: async (args, context) =>
      typeof args.uri === 'string' && args.uri
        ? connection.readResource(args.uri, context.signal)
        : errorResult('uri must be a non-empty string'),
  };
}

/** A server's skills as a tool; not for one used with each person's sign-in (see resources). */
function skillTools(connection: McpServerConnection, people: PersonConnections | undefined) {
  const loader = people ? undefined : skillLoader(connection.config.name, () => connection.skills);
  return loader ? [{ connection, name: LOAD_SKILL, tool: loader }] : [];
}

/** One MCP server as an operator sees it. */
export interface McpServerHealth {
  name: string;
  /** connecting, ready, needs_login, down, closed; or disabled (left off for good). */
  state: string;
  protocolVersion?: string;
  /** The SDK's era of the protocol version. */
  era?: string;
  tools: number;
  /** /readyz's words on it. */
  status: string;
  /** Why it cannot be used now. */
  problem?: string;
}

/** The tools of every configured MCP server, as one source for the registry; and their prompts. */
export class McpToolSource implements ToolSource, PromptPort {
  private constructor(
    private readonly connections: McpServerConnection[],
    /** Servers left off for good, each with why (its OAuth record does not open, most often). */
    private readonly disabled: Array<{ name: string; problem: string }>,
    /** The per-person connections of each server used with each person's own sign-in, by name. */
    private readonly people: Map<string, PersonConnections>,
    private readonly tasks: TaskPort | undefined,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts every server at once; one that fails is reported and retried, never fatal. A server
   * whose OAuth record cannot be opened (MCP_OAUTH_KEY changed) is left off, by name: the others,
   * stdio ones and those with no record or one that opens, start as ever.
   */
  static async start(
    config: McpConfig,
    logger: Logger,
    limits: McpLimits,
    oauth?: McpOAuthOptions,
    /** Where calls that run as tasks are kept; without it no call runs as one. */
    tasks?: TaskPort,
  ): Promise<McpToolSource> {
    for (const problem of config.problems) logger.error(`${problem} (skipped)`);
    const signIns = oauth?.signIns;
    const idp =
      signIns && config.identityProvider
        ? new IdentityProvider(config.identityProvider, signIns)
        : undefined;
    const crossApp = (server: McpServerConfig) =>
      server.kind === 'http' && server.oauth?.grant === 'cross_app_access';
    const authOf = (server: McpServerConfig) => {
      if (server.kind !== 'http' || !server.oauth || !oauth) return undefined;
      const config = { ...server, oauth: server.oauth };
      const { vault, identity } = oauth;
      // Chosen anew at each connection: the last person's identity provider sign-in, exchanged.
      if (crossApp(config) && idp) return () => idp.lister(config);
      // Chosen anew at each connection: an operator's login, or the last person's sign-in.
      if (server.identity === 'person' && signIns)
        return () =>
          StoredOAuthProvider.open(config, vault, identity).then((operator) =>
            signIns.lister(config, operator),
          );
      return oauthProvider(config, vault, identity);
    };
    const disabled: Array<{ name: string; problem: string }> = [];
    const people = new Map<string, PersonConnections>();
    const deps = { logger, limits, clientInfo: CLIENT_INFO, tasks };
    for (const server of personServers(config)) {
      if (crossApp(server) && idp)
        people.set(server.name, new PersonConnections(server, crossAppAccess(server, idp), deps));
      else if (!crossApp(server) && signIns)
        people.set(server.name, new PersonConnections(server, ownSignIn(server, signIns), deps));
    }
    const opened = await Promise.all(
      config.servers.map(async (server) => {
        try {
          if (server.kind === 'http' && server.identity === 'person' && !people.has(server.name))
            throw new Error("is used with each person's own sign-in, which needs PUBLIC_URL");
          const auth = await authOf(server);
          return new McpServerConnection(server, logger, CLIENT_INFO, limits, auth, false, tasks);
        } catch (error) {
          const problem = `${errorMessage(error)}; disabled`;
          logger.error(`MCP server "${server.name}": ${problem}`, { server: server.name });
          disabled.push({ name: server.name, problem });
          return undefined;
        }
      }),
    );
    const connections = opened.filter((c): c is McpServerConnection => c !== undefined);
    // A first sign-in lets Spool list the tools of a server that lists nothing without a token; one
    // to the identity provider, those of every server that takes cross-app access.
    signIns?.onSignIn((name) =>
      connections
        .filter((c) => c.config.name === name || (name === idp?.name && crossApp(c.config)))
        .forEach((c) => c.retryLogin()),
    );
    await Promise.all(connections.map((c) => c.start()));
    return new McpToolSource(connections, disabled, people, tasks, logger);
  }

  /** Each server, with the protocol version it speaks or why it cannot be used (/readyz). */
  status(): string[] {
    return this.servers().map((s) => `MCP server "${s.name}": ${s.status}`);
  }

  /** Each server as an operator sees it: /readyz's lines, and the web pages' health page. */
  servers(): McpServerHealth[] {
    return [
      ...this.disabled.map(({ name, problem }) => ({
        name,
        state: 'disabled',
        tools: 0,
        status: problem,
        problem,
      })),
      ...this.connections.map((c) => ({
        name: c.config.name,
        state: c.state,
        tools: c.tools.length,
        status: c.status,
        ...(c.protocolVersion ? { protocolVersion: c.protocolVersion } : {}),
        ...(c.era ? { era: c.era } : {}),
        ...(c.problem ? { problem: c.problem } : {}),
      })),
    ];
  }

  /** Each server that cannot be used now, and why. */
  problems(): string[] {
    return this.servers().flatMap((s) =>
      s.problem ? [`MCP server "${s.name}": ${s.problem}`] : [],
    );
  }

  tools(): Tool[] {
    const entries = this.connections.flatMap((connection) => {
      const people = this.people.get(connection.config.name);
      return [
        ...connection.tools.map((tool) => ({
          connection,
          name: tool.name,
          tool: serverTool(connection, tool, people),
        })),
        // Resources read with Spool's own connection would lend it to everyone: not for a server
        // used with each person's own sign-in.
        ...(connection.resources && !people
          ? [{ connection, name: READ_RESOURCE, tool: resourceReader(connection) }]
          : []),
        ...skillTools(connection, people),
      ];
    });
    const names = exposedToolNames(
      entries.map((e) => ({ server: e.connection.config.name, tool: e.name })),
    );
    return entries.map(({ tool, connection }, i) => ({
      ...tool,
      spec: { ...tool.spec, name: names[i]!, server: connection.config.name },
    }));
  }

  list(): PromptSpec[] {
    // A prompt rendered with Spool's own connection would lend it to everyone (see tools()).
    const shared = this.connections.filter((c) => !this.people.has(c.config.name));
    return shared.flatMap((connection) =>
      connection.prompts.map((prompt) => ({
        server: connection.config.name,
        name: prompt.name,
        ...(prompt.description ? { description: prompt.description } : {}),
        arguments: (prompt.arguments ?? []).map((a) => ({
          name: a.name,
          ...(a.description ? { description: a.description } : {}),
          required: a.required ?? false,
        })),
      })),
    );
  }

  async render(server: string, name: string, args: Record<string, string>): Promise<string> {
    const connection = this.connections.find((c) => c.config.name === server);
    if (!connection || this.people.has(server)) throw new Error(`no MCP server "${server}"`);
    return connection.prompt(name, args);
  }

  async resumable(toolCallIds: string[]): Promise<Set<string>> {
    return (await this.tasks?.openAmong(toolCallIds)) ?? new Set();
  }

  /** A task of a server no longer configured is only marked ended: nobody can follow it. */
  async cancelTasks(conversation: ConversationKey): Promise<void> {
    const open = (await this.tasks?.openIn(conversation)) ?? [];
    await Promise.all(
      open.map(async ({ toolCallId, server, taskId }) => {
        await this.connections
          .find((c) => c.config.name === server)
          ?.cancel(taskId)
          .catch((error: unknown) =>
            this.logger.warn(
              `MCP server "${server}" did not cancel task ${taskId}: ${errorMessage(error)}`,
            ),
          );
        await this.tasks!.finish(toolCallId, 'cancelled');
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      ...this.connections.map((c) => c.close()),
      ...[...this.people.values()].map((p) => p.close()),
    ]);
  }
}
