import type { Client, RequestOptions, Tool as McpTool } from '@modelcontextprotocol/client';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import type { StoredTask, TaskPort } from '../../../core/ports/parked/tasks.ts';
import {
  errorResult,
  type ParkedCall,
  type ToolContext,
  type ToolOutcome,
} from '../../../core/ports/tools.ts';
import { toOutcome } from '../result.ts';
import type { RunningCall } from '../server-requests/questions.ts';
import { ExtensionTaskCall } from './tasks-extension.ts';
import { FOLLOW_MS, LegacyTaskCall, runsAsTask, type TaskCall } from './tasks.ts';

/**
 * How a call runs as a task, if it may become one: a stored task is taken up again; a server of
 * the tasks extension decides itself, through the extension's session; a 2025 server, by the
 * tool's `taskSupport`. Otherwise it is a plain call.
 */
export function taskCallFor(
  client: Client,
  session: TaskEnabledSession<RunningCall> | undefined,
  tools: McpTool[],
  run: {
    params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, string> };
    call: RunningCall;
    options: RequestOptions & { signal: AbortSignal };
    stored: StoredTask | undefined;
    onStatus: (message: string) => void;
  },
): TaskCall | undefined {
  const { params, call, options, stored, onStatus } = run;
  const listed = tools.find((t) => t.name === params.name);
  const legacy = listed !== undefined && runsAsTask(listed, client.getServerCapabilities());
  if (!(stored || session || legacy)) return undefined;
  return session
    ? new ExtensionTaskCall(session, params, call, options.signal, stored?.taskId, onStatus)
    : new LegacyTaskCall(client, params, options, stored?.taskId, onStatus);
}

/** A call that may run as a task: where its task is kept, and whose call it is. */
export interface TaskRunPlace extends Pick<ToolContext, 'signal' | 'conversation'> {
  tasks: TaskPort;
  server: string;
  tool: string;
  toolCallId: string;
  binaryMaxBytes: number;
}

/**
 * A call the server may run as a task, in either era: started once (its task's id kept before
 * anything waits on it) and followed until it ends, or parked on while it runs. A Stop while it
 * is followed cancels it.
 */
export async function runAsTask(
  call: TaskCall,
  { tasks, server, tool, toolCallId, conversation, signal, binaryMaxBytes }: TaskRunPlace,
  stored: StoredTask | undefined,
): Promise<ToolOutcome | ParkedCall> {
  try {
    // A server of the tasks extension may answer at once: then the call was a plain one.
    const result = await call.begin();
    if (result) return toOutcome(result, binaryMaxBytes);
    if (!stored) await tasks.save({ toolCallId, server, taskId: call.taskId!, conversation });
    // A task taken up again is looked at once: the turn parks on it at once if it still runs.
    const end = await call.follow(stored ? 0 : FOLLOW_MS);
    if ('parked' in end) return end.parked;
    await tasks.finish(toolCallId, end.ended);
    if (end.ended === 'cancelled')
      return errorResult(`${tool} on MCP server "${server}" was cancelled.`);
    if ('error' in end)
      return errorResult(`${tool} on MCP server "${server}" failed: ${end.error}`);
    return toOutcome(end.result, binaryMaxBytes);
  } catch (error) {
    // A call that never became a task failed as any call does.
    if (!call.taskId) throw error;
    if (signal.aborted) {
      await call.cancel();
      await tasks.finish(toolCallId, 'cancelled');
    } else if (call.answered(error)) {
      // The server answered, and not with the task (a stdio server restarted lost it): it ends.
      await tasks.finish(toolCallId, 'failed');
    } else {
      // The server did not answer: the task is looked at again later.
      return { parked: 'task', until: new Date(Date.now() + FOLLOW_MS) };
    }
    throw error;
  }
}
