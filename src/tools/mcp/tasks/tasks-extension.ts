import type {
  CallToolResult,
  Client,
  JSONRPCMessage,
  Tool as McpTool,
} from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  DispatchError,
  JsonRpcResponseError,
  resultFromTaskOutcome,
  taskViewFromExecutionEvent,
  toolDeclarationFromMcpTool,
  type ApplicationInputRequest,
  type JsonRpcResponse,
  type RawClientDispatch,
  type TaskEnabledSession,
  type TaskOutcome,
  type TaskView,
  type ToolExecution,
} from '@modelcontextprotocol/ext-tasks/client';
import { taskId as asTaskId, type JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import type { ErrorV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { ParkedCall } from '../../../core/ports/tools.ts';
import { FOLLOW_MS, nextLook, type TaskCall, type TaskEnd } from './tasks.ts';

/**
 * MCP tasks in the 2026-07-28 era: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663),
 * through its official client (`@modelcontextprotocol/ext-tasks`). A server that declares the
 * extension may answer any `tools/call` with a task (`resultType: "task"`), followed with
 * `tasks/get`, whose last answer carries the result inline; `tasks/update` answers its questions
 * and `tasks/cancel` stops it. Spool declares the extension as the extension says: in the
 * per-request capabilities of each call and task request it sends to such a server, and nowhere
 * else, so a server without it is spoken to as before.
 */

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * The requests of the tasks extension go out on the connection's own transport, beside the SDK's:
 * the SDK's 2026 codec refuses a result it does not know (`resultType: "task"`) and methods it
 * does not speak. Spool's ids for them are strings the SDK (which counts in numbers) never uses, so
 * their answers are told apart; everything else reaches the SDK as before.
 */
function rawDispatchOver(client: Client): RawClientDispatch {
  const transport = client.transport;
  if (!transport) throw new Error('the MCP client is not connected');
  const waiting = new Map<string, (response: JsonRpcResponse) => void>();
  const passOn = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    const answer = typeof id === 'string' ? waiting.get(id) : undefined;
    if (!answer) return passOn?.(message, extra);
    waiting.delete(id as string);
    answer(
      'error' in message
        ? { kind: 'error', error: message.error as ErrorV2 }
        : { kind: 'result', result: (message as { result: JsonValue }).result },
    );
  };
  let sent = 0;
  return async (request, options) => {
    const id = `spool-tasks-${++sent}`;
    const answered = new Promise<JsonRpcResponse>((resolve, reject) => {
      waiting.set(id, resolve);
      options?.signal?.addEventListener(
        'abort',
        () => {
          waiting.delete(id);
          reject(options.signal!.reason);
        },
        { once: true },
      );
    });
    // Stopped while it is being sent, its caller hears of it when it awaits the answer.
    answered.catch(() => {});
    try {
      await transport.send({ jsonrpc: '2.0', id, ...(request as object) } as JSONRPCMessage);
    } catch (error) {
      waiting.delete(id);
      throw new DispatchError('the MCP server could not be reached', false, { cause: error });
    }
    return answered;
  };
}

/** What a call's questions (a form, Spool's model, its roots) are answered with. */
export type TaskInput<Context> = (
  request: ApplicationInputRequest,
  context: Context,
) => Promise<unknown>;

/**
 * The tasks extension's session on a connected client, when the server speaks the 2026-07-28 era
 * and declares the extension; none otherwise (a 2025 server's tasks are Spool's own to follow).
 */
export function openTaskSession<Context>(
  client: Client,
  options: {
    /** The server's name in mcp.json: the tasks it keeps are known by it across restarts. */
    server: string;
    clientInfo: { name: string; version: string };
    capabilities: Record<string, unknown>;
    tools: () => McpTool[];
    input: TaskInput<Context>;
    onError: (error: Error) => void;
  },
): TaskEnabledSession<Context> | undefined {
  const declared = client.getServerCapabilities()?.extensions?.[TASKS_EXTENSION];
  if (client.getProtocolEra() !== 'modern' || !declared) return undefined;
  const { server, clientInfo, capabilities, tools, input, onError } = options;
  return createTaskSessionFromClient<Context>(client, {
    endpointId: server,
    rawDispatch: rawDispatchOver(client),
    v2RequestFraming: {
      protocolVersion: client.getNegotiatedProtocolVersion()!,
      clientInfo,
      clientCapabilities: capabilities as never,
    },
    // The tools Spool listed, not a list of the session's own.
    tools: {
      currentTool: (name) => {
        const tool = tools().find((t) => t.name === name);
        return tool ? toolDeclarationFromMcpTool(tool) : undefined;
      },
    },
    // The extension checks each answer against its question's schema before sending it.
    onInputRequest: (request, context) => input(request, context.applicationContext) as never,
    onError,
  });
}

/**
 * A call to a server with the tasks extension: sent through the extension's session, which answers
 * at once or with a task. A task is followed for a while, then the turn parks on it; taken up
 * again, it is looked at once (`tasks/get`, whose answer carries the result of a task that ended).
 * While the task needs input, the person is asked and the follow waits for them.
 */
export class ExtensionTaskCall<Context> implements TaskCall {
  private execution?: ToolExecution<CallToolResult, Context>;

  constructor(
    private readonly session: TaskEnabledSession<Context>,
    private readonly params: {
      name: string;
      arguments: Record<string, unknown>;
      _meta?: Record<string, string>;
    },
    private readonly context: Context,
    private readonly signal: AbortSignal,
    public taskId: string | undefined,
    private readonly onStatus: (message: string) => void,
  ) {}

  async begin(): Promise<CallToolResult | undefined> {
    const { session, context: applicationContext, signal, params } = this;
    if (this.taskId) {
      const reference = {
        endpointId: session.endpointId,
        generation: 'v2',
        taskId: asTaskId(this.taskId),
        originalOperation: 'tools/call',
      } as const;
      this.execution = await session.resumeTask<CallToolResult>(reference, {
        applicationContext,
        signal,
      });
      return undefined;
    }
    const execution = await session.callTool<CallToolResult>(
      params.name,
      params.arguments as never,
      {
        applicationContext,
        signal,
        ...(params._meta ? { metadata: params._meta } : {}),
      },
    );
    if (execution.kind === 'immediate') return resultFromTaskOutcome(await execution.result());
    this.execution = execution;
    this.taskId = execution.handle.taskId;
    return undefined;
  }

  async follow(followMs: number): Promise<TaskEnd | { parked: ParkedCall }> {
    // The follow ends `followMs` after the task last worked without needing input. A task that
    // ended is known before a timer can fire, even with none to wait (a task taken up again).
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const arm = () => (timer ??= setTimeout(() => deadline.abort(), followMs));
    arm();
    let last: TaskView | undefined;
    try {
      const { outcome } = await this.execution!.settle({
        signal: AbortSignal.any([this.signal, deadline.signal]),
        onEvent: (event) => {
          last = taskViewFromExecutionEvent(event) ?? last;
          if (last?.statusMessage) this.onStatus(last.statusMessage);
          if (last?.status !== 'input_required') return void arm();
          clearTimeout(timer);
          timer = undefined;
        },
      });
      this.signal.throwIfAborted();
      return ended(outcome);
    } catch (error) {
      if (this.signal.aborted || !deadline.signal.aborted) throw error;
      // Followed long enough: the task runs on at its server, and is looked at again later.
      return {
        parked: last
          ? nextLook(last, Date.now())
          : { parked: 'task', until: new Date(Date.now() + FOLLOW_MS) },
      };
    } finally {
      clearTimeout(timer);
    }
  }

  cancel(): Promise<void> {
    return cancelInSession(this.session, this.taskId!);
  }

  answered(error: unknown): boolean {
    return error instanceof JsonRpcResponseError;
  }
}

/**
 * How the task ended. A failure the server did not answer with (its connection lost while the
 * task was followed) is no end: it is thrown, and the task looked at again later.
 */
function ended(outcome: TaskOutcome<CallToolResult>): TaskEnd {
  if (outcome.status === 'completed') return { ended: 'completed', result: outcome.result };
  if (outcome.status === 'cancelled') return { ended: 'cancelled' };
  if (outcome.error.code === undefined) throw outcome.error;
  return { ended: 'failed', error: outcome.error.message };
}

/** Asks the server to cancel a task of this session; a task that ended already is left as it is. */
export async function cancelInSession<Context>(
  session: TaskEnabledSession<Context>,
  taskId: string,
): Promise<void> {
  await session.cancelTask(asTaskId(taskId)).catch(() => {});
}
