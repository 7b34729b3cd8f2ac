import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormRequest } from '../../../src/core/ports/parked/forms.ts';
import { isParked, type ToolContext } from '../../../src/core/ports/tools.ts';
import type { Database } from '../../../src/store/database.ts';
import { TaskLedger } from '../../../src/store/delivery/task-ledger.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { ToolRegistry } from '../../../src/tools/registry.ts';
import { testDatabase } from '../../support/db.ts';
import { silentLogger } from '../../support/logger.ts';

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
  const config = parseMcpConfig(
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    }),
    join(tmpdir(), 'mcp.json'),
    process.env,
    new Set(),
  );
  source = await McpToolSource.start(
    config,
    silentLogger,
    { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 },
    undefined,
    new TaskLedger(db.prisma),
  );
  registry = new ToolRegistry([source]);
}, 60_000);

afterAll(async () => {
  await source?.close();
  await db?.close();
});

const context = (callId: string, askForm?: ToolContext['askForm']): ToolContext => ({
  conversation: {
    id: '00000000-0000-0000-0000-000000000000',
    platform: 't',
    workspace: 'w',
    channel: 'c',
    thread: callId,
  },
  turn: 1,
  callId,
  signal: new AbortController().signal,
  reading: { transcript: [], viewChars: 200_000 },
  ...(askForm ? { askForm } : {}),
});

const taskRow = async (callId: string) =>
  db.prisma.toolTask.findUnique({ where: { toolCallId: callId } });

describe('the everything server, with tasks kept', () => {
  it('offers its task-only tool, and a call runs as a task to its report', async () => {
    expect(registry.list().map((t) => t.name)).toContain(RESEARCH);
    const callId = 'call_00000000000000000000000000000001';
    const outcome = await registry.call(RESEARCH, { topic: 'otters' }, context(callId));
    expect(isParked(outcome)).toBe(false);
    expect(outcome).toMatchObject({ isError: false });
    expect(!isParked(outcome) && outcome.content).toContain('Research Report: otters');
    expect(await taskRow(callId)).toMatchObject({ server: 'everything', status: 'completed' });
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
      context(callId, askForm),
    );
    expect(asked).toHaveLength(1);
    expect(!isParked(outcome) && outcome.content).toContain('Clarification');
    expect(await taskRow(callId)).toMatchObject({ status: 'completed' });
  });
});
