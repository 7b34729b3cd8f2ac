import {
  specTypeSchemas,
  type Client,
  type GetTaskResult,
  type RequestOptions,
  type ServerCapabilities,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import { setTimeout as delay } from 'node:timers/promises';
import type { ParkedCall } from '../../core/ports/tools.ts';

/**
 * MCP tasks (SEP-1686, the 2025-11-25 era): a call its server runs as a task answers at once with
 * the task's id, then is followed with `tasks/get` until it ends and its result is taken with
 * `tasks/result`. The 2026-07-28 era moves tasks to an extension the SDK does not speak yet; a
 * server of that era is called without them.
 */

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
    const pollMs = Math.min(Math.max(task.pollInterval ?? 1_000, MIN_POLL_MS), MAX_POLL_MS);
    if (now() - started + pollMs > options.followMs) {
      const age = now() - Date.parse(task.createdAt);
      const wait = Math.min(Math.max(pollMs, age / AGE_SHARE || 0), MAX_POLL_MS);
      return {
        parked: {
          parked: 'task',
          until: new Date(now() + wait),
          ...(task.statusMessage ? { status: task.statusMessage } : {}),
        },
      };
    }
    await delay(pollMs, undefined, { signal: options.signal });
    task = await lookAtTask(client, task.taskId, options);
  }
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
