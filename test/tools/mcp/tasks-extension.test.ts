import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormRequest } from '../../../src/core/ports/parked/forms.ts';
import { isParked } from '../../../src/core/ports/tools.ts';
import type { Database } from '../../../src/store/database.ts';
import type { McpToolSource } from '../../../src/tools/mcp/source.ts';
import type { ToolRegistry } from '../../../src/tools/registry.ts';
import { testDatabase } from '../../support/db.ts';
import { mcpToolsKeepingTasks, taskCallContext, taskRow } from '../../support/mcp-tasks.ts';
import { freePort, until } from '../../support/process.ts';

/**
 * The 2026-07-28 era's tasks extension, with a server of its own process that declares it
 * (test/fixtures/modern-task-mcp-server.mjs): how a task ends becomes the call's result, its
 * question is put to the person and answered with `tasks/update`, and Spool declares the extension
 * only where it keeps tasks.
 */
let db: Database;
let dir: string;
const sources: McpToolSource[] = [];
const servers: ChildProcess[] = [];

interface ServerEvent {
  event: string;
  taskId?: string;
  topic?: string;
  name?: string;
}

/** A fixture server of its own process: its address, what it saw, and its process. */
interface TaskServer {
  url: string;
  seen: () => Promise<ServerEvent[]>;
  child: ChildProcess;
}

async function startServer(name: string): Promise<TaskServer> {
  const events = join(dir, `${name}.jsonl`);
  const port = await freePort();
  const child = spawn(process.execPath, ['test/fixtures/modern-task-mcp-server.mjs'], {
    env: { ...process.env, PORT: String(port), EVENTS_FILE: events },
    stdio: 'inherit',
  });
  servers.push(child);
  const seen = async () =>
    (await readFile(events, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ServerEvent);
  await until(async () => ((await seen()).length > 0 ? true : undefined));
  return { url: `http://127.0.0.1:${port}/mcp`, seen, child };
}

let server: TaskServer;
const seen = () => server.seen();

beforeAll(async () => {
  db = await testDatabase();
  dir = await mkdtemp(join(tmpdir(), 'spool-tasks-ext-'));
  server = await startServer('events');
}, 60_000);

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  for (const child of servers) child.kill();
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Spool's MCP tools of a fixture server, with tasks kept (in the test database) or not. */
async function started(keepTasks: boolean, url = server.url): Promise<ToolRegistry> {
  const { source, tools } = await mcpToolsKeepingTasks(
    { tasks: { url } },
    keepTasks ? db : undefined,
  );
  sources.push(source);
  return tools;
}

const research = async (
  tools: ToolRegistry,
  callId: string,
  topic: string,
  asks?: FormRequest[],
) => {
  const askForm = async (request: FormRequest) => {
    asks?.push(request);
    return { action: 'accept' as const, content: { name: 'the otter society' } };
  };
  const outcome = await tools.call(
    'tasks__research',
    { topic, seconds: 1 },
    taskCallContext(callId, askForm),
  );
  if (isParked(outcome)) throw new Error('parked: the task should end within the follow');
  return outcome;
};

describe('a server with the tasks extension', () => {
  it('answers with a task, followed to its report; the task is kept until it ends', async () => {
    const source = await started(true);
    const callId = 'call_ext_00000000000000000000000001';
    const outcome = await research(source, callId, 'otters');
    expect(outcome).toMatchObject({ isError: false, content: 'report on otters' });
    const [call] = (await seen()).filter((e) => e.event === 'call' && e.topic === 'otters');
    expect(await taskRow(db, callId)).toMatchObject({ taskId: call!.taskId, status: 'completed' });
  });

  it("a task that fails is the call's error result, with the server's reason", async () => {
    const source = await started(true);
    const callId = 'call_ext_00000000000000000000000002';
    const outcome = await research(source, callId, 'broken');
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain('the archive is offline');
    expect(await taskRow(db, callId)).toMatchObject({ status: 'failed' });
  });

  it("a task the server cancels is the call's error result", async () => {
    const source = await started(true);
    const callId = 'call_ext_00000000000000000000000003';
    const outcome = await research(source, callId, 'withdrawn');
    expect(outcome).toMatchObject({ isError: true });
    expect(outcome.content).toContain('was cancelled');
    expect(await taskRow(db, callId)).toMatchObject({ status: 'cancelled' });
  });

  it("puts the task's question to the person and answers it with tasks/update", async () => {
    const source = await started(true);
    const callId = 'call_ext_00000000000000000000000004';
    const asks: FormRequest[] = [];
    const outcome = await research(source, callId, 'whom', asks);
    expect(asks.map((a) => a.message)).toEqual(['Who is the report for?']);
    expect((await seen()).filter((e) => e.event === 'update')).toMatchObject([
      { name: 'the otter society' },
    ]);
    expect(outcome).toMatchObject({ content: 'report on whom for the otter society' });
    expect(await taskRow(db, callId)).toMatchObject({ status: 'completed' });
  });

  it('where Spool keeps no tasks, it does not declare the extension: the call runs plainly', async () => {
    const source = await started(false);
    const callId = 'call_ext_00000000000000000000000005';
    const outcome = await research(source, callId, 'badgers');
    expect(outcome).toMatchObject({ content: 'report on badgers' });
    const badgers = (await seen()).filter((e) => e.topic === 'badgers');
    expect(badgers.map((e) => e.event)).toEqual(['plain']);
    expect(await taskRow(db, callId)).toBeNull();
  });

  it('a server gone while its task is followed parks the turn: the task is not taken as failed', async () => {
    const lost = await startServer('lost');
    const tools = await started(true, lost.url);
    const callId = 'call_ext_00000000000000000000000006';
    const outcome = tools.call(
      'tasks__research',
      { topic: 'voles', seconds: 60 },
      taskCallContext(callId),
    );
    await until(async () =>
      (await lost.seen()).some((e) => e.event === 'call' && e.topic === 'voles') ? true : undefined,
    );
    lost.child.kill('SIGKILL');
    expect(await outcome).toMatchObject({ parked: 'task' });
    expect(await taskRow(db, callId)).toMatchObject({ status: 'working' });
  });
});
