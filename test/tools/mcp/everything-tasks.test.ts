import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormRequest } from '../../../src/core/ports/parked/forms.ts';
import { isParked } from '../../../src/core/ports/tools.ts';
import type { Database } from '../../../src/store/database.ts';
import type { McpToolSource } from '../../../src/tools/mcp/source.ts';
import type { ToolRegistry } from '../../../src/tools/registry.ts';
import { testDatabase } from '../../support/db.ts';
import { mcpToolsKeepingTasks, taskCallContext, taskRow } from '../../support/mcp-tasks.ts';

/**
 * The official everything server's task-only tool (simulate-research-query, SEP-1686) over stdio:
 * offered once Spool keeps tasks, run as a task, its clarifying question put to the person through
 * tasks/result, and its task kept by the call's id until its result is taken.
 */
const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const RESEARCH = 'everything__simulate-research-query';

let db: Database;
let registry: ToolRegistry;
let source: McpToolSource;

beforeAll(async () => {
  db = await testDatabase();
  ({ source, tools: registry } = await mcpToolsKeepingTasks(
    { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    db,
  ));
}, 60_000);

afterAll(async () => {
  await source?.close();
  await db?.close();
});

describe('the everything server, with tasks kept', () => {
  it('offers its task-only tool, and a call runs as a task to its report', async () => {
    expect(registry.list().map((t) => t.name)).toContain(RESEARCH);
    const callId = 'call_00000000000000000000000000000001';
    const outcome = await registry.call(RESEARCH, { topic: 'otters' }, taskCallContext(callId));
    expect(isParked(outcome)).toBe(false);
    expect(outcome).toMatchObject({ isError: false });
    expect(!isParked(outcome) && outcome.content).toContain('Research Report: otters');
    expect(await taskRow(db, callId)).toMatchObject({ server: 'everything', status: 'completed' });
  });

  it("puts the task's clarifying question to the person, and the report says their answer", async () => {
    const asked: FormRequest[] = [];
    const askForm = async (request: FormRequest) => {
      asked.push(request);
      const [field] = request.fields;
      const choice = field?.options?.[0]?.value ?? 'the animal';
      return { action: 'accept' as const, content: { [field!.name]: choice } };
    };
    const callId = 'call_00000000000000000000000000000002';
    const outcome = await registry.call(
      RESEARCH,
      { topic: 'python', ambiguous: true },
      taskCallContext(callId, askForm),
    );
    expect(asked).toHaveLength(1);
    expect(!isParked(outcome) && outcome.content).toContain('Clarification');
    expect(await taskRow(db, callId)).toMatchObject({ status: 'completed' });
  });
});
