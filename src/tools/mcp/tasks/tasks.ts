import {
  ProtocolError,
  specTypeSchemas,
  type CallToolResult,
  type Client,
  type GetTaskResult,
  type RequestOptions,
  type ServerCapabilities,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import { setTimeout as delay } from 'node:timers/promises';
import type { ParkedCall } from '../../../core/ports/tools.ts';

/**
 * MCP tasks (SEP-1686, the 2025-11-25 era): a call its server runs as a task answers at once with
 * the task's id, then is followed with `tasks/get` until it ends and its result is taken with
 * `tasks/result`. The 2026-07-28 era's tasks extension is spoken through its official client
 * (tasks-extension.ts); both are carried out as a `TaskCall`, on the same stored task and parked
 * turn.
 */

/** How a call that may run as a task is carried out, whichever era its server speaks. */
export interface TaskCall {
  /** The task the call became, once it became one (or the stored task taken up again). */
  readonly taskId: string | undefined;
  /**
   * Sends the call, or looks again at the stored task: resolves with the call's result when the
   * server answered at once instead of with a task.
   */
  begin(): Promise<CallToolResult | undefined>;
  /** Follows the task until it ends or, past `followMs`, parks the turn on it. */
  follow(followMs: number): Promise<TaskEnd | { parked: ParkedCall }>;
  /** Asks the server to cancel the task; a task that ended already is left as it is. */
  cancel(): Promise<void>;
  /** Whether the server answered with this error (the task is gone), rather than not answered. */
  answered(error: unknown): boolean;
}

/** How a task ended: its result (a tool's error is a result too), the server's error, or cancelled. */
export type TaskEnd =
  | { ended: 'completed' | 'failed'; result: CallToolResult }
  | { ended: 'failed'; error: string }
  | { ended: 'cancelled' };

/**
 * How long the call that starts a task follows it before the turn parks on it, holding nothing: a
 * task that ends quickly is answered as quickly as a plain call.
 */
export const FOLLOW_MS = 5_000;
/** Bounds on the wait between two looks, whatever the server suggests. */
const MIN_POLL_MS = 250;
const MAX_POLL_MS = 60_000;
/**
 * A parked task is looked at again after the server's suggested interval or a tenth of its age,
 * whichever is longer: an hour-long task costs a few dozen looks, and its answer comes at most a
 * tenth of its time late.
 */
const AGE_SHARE = 10;
/** How long the server keeps a task's result: past any turn's wait for it. */
const TASK_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Whether calls of this tool run as tasks: the tool requires or allows it and the server runs
 * tools/call as tasks. A tool that allows it may run long; one that runs briefly ends within the
 * first look anyway.
 */
export function runsAsTask(tool: McpTool, server: ServerCapabilities | undefined): boolean {
  const support = tool.execution?.taskSupport;
  return (
    (support === 'required' || support === 'optional') &&
    server?.tasks?.requests?.tools?.call !== undefined
  );
}

/** Sends the call as a task: resolves with the task's id and where it stands. */
export async function startTask(
  client: Client,
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: RequestOptions,
): Promise<GetTaskResult> {
  const { task } = await client.request(
    { method: 'tools/call', params: { ...params, task: { ttl: TASK_TTL_MS } } },
    specTypeSchemas.CreateTaskResult,
    options,
  );
  return task as GetTaskResult;
}

export type TaskLook =
  | { ended: 'completed' | 'failed' | 'cancelled' | 'input_required'; task: GetTaskResult }
  | { parked: ParkedCall };

/**
 * Looks at the task until it ends or needs input, or, past `followMs`, parks the turn on it until
 * its next look is due.
 */
export async function followTask(
  client: Client,
  first: GetTaskResult,
  options: RequestOptions & { signal: AbortSignal; followMs: number },
  onStatus: (message: string) => void,
  now: () => number = Date.now,
): Promise<TaskLook> {
  const started = now();
  let task = first;
  for (;;) {
    if (task.statusMessage) onStatus(task.statusMessage);
    if (task.status !== 'working') return { ended: task.status, task };
    // The last look is at the end of `followMs`, not a poll before it: a task of four 1 s stages
    // polled each second was parked at 4 s, though it ended within the 5 s followed.
    const left = options.followMs - (now() - started);
    if (left <= 0) return { parked: nextLook(task, now()) };
    await delay(Math.min(pollMsOf(task), left), undefined, { signal: options.signal });
    task = await lookAtTask(client, task.taskId, options);
  }
}

const pollMsOf = (task: { pollInterval?: number }) =>
  Math.min(Math.max(task.pollInterval ?? 1_000, MIN_POLL_MS), MAX_POLL_MS);

/** The turn parked on a running task, until its next look is due. */
export function nextLook(
  task: { pollInterval?: number; createdAt?: string; statusMessage?: string },
  now: number,
): ParkedCall {
  const age = task.createdAt ? now - Date.parse(task.createdAt) : 0;
  const wait = Math.min(Math.max(pollMsOf(task), age / AGE_SHARE || 0), MAX_POLL_MS);
  return {
    parked: 'task',
    until: new Date(now + wait),
    ...(task.statusMessage ? { status: task.statusMessage } : {}),
  };
}

/** Where the task stands now. */
export function lookAtTask(
  client: Client,
  taskId: string,
  options: RequestOptions,
): Promise<GetTaskResult> {
  return client.request(
    { method: 'tasks/get', params: { taskId } },
    specTypeSchemas.GetTaskResult,
    options,
  );
}

/** The ended task's result: what the tool returned (or its error), as `tasks/result` gives it. */
export function taskResult(client: Client, taskId: string, options: RequestOptions) {
  return client.request(
    { method: 'tasks/result', params: { taskId } },
    specTypeSchemas.CallToolResult,
    options,
  );
}

/** Asks the server to cancel the task; a task that ended already is left as it is. */
export async function cancelTask(client: Client, taskId: string): Promise<void> {
  await client
    .request({ method: 'tasks/cancel', params: { taskId } }, specTypeSchemas.CancelTaskResult)
    .catch(() => {});
}

/**
 * A call to a 2025-11-25 server that runs it as a task: sent with a `task` asked for, followed with
 * `tasks/get`, its result taken with `tasks/result`, which also carries a task's questions.
 */
export class LegacyTaskCall implements TaskCall {
  private first?: GetTaskResult;

  constructor(
    private readonly client: Client,
    private readonly params: {
      name: string;
      arguments: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    },
    private readonly options: RequestOptions & { signal: AbortSignal },
    public taskId: string | undefined,
    private readonly onStatus: (message: string) => void,
  ) {}

  async begin(): Promise<undefined> {
    this.first = this.taskId
      ? await lookAtTask(this.client, this.taskId, this.options)
      : await startTask(this.client, this.params, this.options);
    this.taskId = this.first.taskId;
    return undefined;
  }

  async follow(followMs: number): Promise<TaskEnd | { parked: ParkedCall }> {
    const look = await followTask(
      this.client,
      this.first!,
      { ...this.options, followMs },
      this.onStatus,
    );
    if ('parked' in look) return look;
    if (look.ended === 'cancelled') return { ended: 'cancelled' };
    // A task that needs input asks through tasks/result, whose answer waits for the task's end.
    const result = await taskResult(this.client, look.task.taskId, this.options);
    return { ended: look.ended === 'failed' ? 'failed' : 'completed', result };
  }

  cancel(): Promise<void> {
    return cancelTask(this.client, this.taskId!);
  }

  answered(error: unknown): boolean {
    return error instanceof ProtocolError;
  }
}
