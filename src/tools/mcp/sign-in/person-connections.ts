import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { errorMessage, SignInRequiredError } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import {
  errorResult,
  type ParkedCall,
  type ToolContext,
  type ToolOutcome,
} from '../../../core/ports/tools.ts';
import type { TaskPort } from '../../../core/ports/parked/tasks.ts';
import { McpServerConnection, type McpLimits } from '../connection.ts';
import { PersonOAuthProvider, type Person } from './person-oauth.ts';
import type { PersonServer, SignIns } from './sign-in.ts';

/** A person's connection with no call for this long is closed. */
const IDLE_MS = 5 * 60_000;

interface PersonEntry<P> {
  connection: McpServerConnection;
  provider: P;
  calls: number;
  idle?: NodeJS.Timeout;
}

/** How a server's calls are authorized as each person, and when that person must sign in first. */
export interface PersonAccess<P extends OAuthClientProvider> {
  /** The OAuth client of a person's connection to the server. */
  provider(person: Person): P;
  /** Before each call: throws SignInRequiredError when the person has to sign in first. */
  before(provider: P, toolCallId: string): Promise<void>;
  /** What a failed call asks of its person: a sign-in (the error that parks it), or nothing. */
  signInAfter(
    error: unknown,
    provider: P,
    toolCallId: string,
  ): Promise<SignInRequiredError | undefined>;
}

/** Each person's own sign-in to the server, from a link sent to them (authorization code). */
export function ownSignIn(
  server: PersonServer,
  signIns: SignIns,
): PersonAccess<PersonOAuthProvider> {
  return {
    provider: (person) =>
      new PersonOAuthProvider(server, person, signIns.vault, signIns.identity, {
        serverUrl: server.url.href,
      }),
    before: async (provider) => {
      // They may have signed in or out on another replica since.
      await provider.reload();
      provider.asked = undefined;
    },
    signInAfter: async (error, provider, toolCallId) =>
      error instanceof UnauthorizedError && provider.asked
        ? signIns.required(server, provider, provider.asked, toolCallId)
        : undefined,
  };
}

/** Whom a call acts for: the person whose message the turn answers, in its workspace. */
export function personOf(context: Pick<ToolContext, 'user' | 'conversation'>): Person | undefined {
  if (!context.user) return undefined;
  const { platform, workspace } = context.conversation;
  return { platform, workspace, user: context.user };
}

const keyOf = (p: Person) => JSON.stringify([p.platform, p.workspace, p.user]);

/**
 * One server used with each person's own sign-in: a connection per person, opened by their first
 * call with their OAuth client and closed when idle, so that every call carries the token of the
 * person it is made for and never another's.
 */
export class PersonConnections<P extends OAuthClientProvider = OAuthClientProvider> {
  private readonly people = new Map<string, PersonEntry<P>>();

  constructor(
    private readonly server: PersonServer,
    private readonly access: PersonAccess<P>,
    private readonly deps: {
      logger: Logger;
      limits: McpLimits;
      clientInfo: { name: string; version: string };
      tasks?: TaskPort;
    },
  ) {}

  /**
   * Runs `tool` as the person the call is made for; throws SignInRequiredError when they have to
   * sign in (again, or with a wider scope) first.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<ToolOutcome | ParkedCall> {
    const person = personOf(context);
    const { name } = this.server;
    if (!person || !context.callId)
      return errorResult(
        `MCP server "${name}" acts as the person who asked, and this call is made for nobody in particular.`,
      );
    const key = keyOf(person);
    const entry = this.entry(key, person);
    entry.calls++;
    clearTimeout(entry.idle);
    try {
      await this.access.before(entry.provider, context.callId);
      await entry.connection.open();
      return await entry.connection.call(tool, args, context);
    } catch (error) {
      if (error instanceof SignInRequiredError) throw error;
      // The connection stays: the transport reads the token anew for each request, and the next
      // call reloads the sign-in first.
      const signIn = await this.access.signInAfter(error, entry.provider, context.callId);
      if (signIn) throw signIn;
      return errorResult(`${tool} on MCP server "${name}" failed: ${errorMessage(error)}`);
    } finally {
      entry.calls--;
      if (entry.calls === 0 && this.people.get(key) === entry) {
        entry.idle = setTimeout(() => this.drop(key, entry), IDLE_MS);
        entry.idle.unref();
      }
    }
  }

  async close(): Promise<void> {
    const entries = [...this.people.values()];
    this.people.clear();
    await Promise.allSettled(
      entries.map((e) => {
        clearTimeout(e.idle);
        return e.connection.close();
      }),
    );
  }

  private entry(key: string, person: Person): PersonEntry<P> {
    const known = this.people.get(key);
    if (known) return known;
    const { logger, limits, clientInfo, tasks } = this.deps;
    const provider = this.access.provider(person);
    const connection = new McpServerConnection(
      this.server,
      logger,
      clientInfo,
      limits,
      provider,
      true,
      tasks,
    );
    const entry: PersonEntry<P> = { connection, provider, calls: 0 };
    this.people.set(key, entry);
    return entry;
  }

  private drop(key: string, entry: PersonEntry<P>): void {
    clearTimeout(entry.idle);
    if (this.people.get(key) === entry) this.people.delete(key);
    // Nothing to report from closing a connection nobody uses.
    entry.connection.close().catch(() => {});
  }
}
