import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/core/agent/agent.ts';
import { findToolsTool } from '../../../src/core/builtins/find-tools.ts';
import { loadToolsTool } from '../../../src/core/builtins/load-tools.ts';
import type { Conversation } from '../../../src/core/ports/conversation.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { builtinSource, type ToolRegistry } from '../../../src/tools/registry.ts';
import {
  defaultAgentOptions,
  lastMessage,
  openAiClientFor,
  toolsWithPages,
} from '../../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';
import { MANY_TOOLS } from '../../support/many-tools.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER } from '../../support/process.ts';

// Spool's defaults: TOOL_SCHEMAS_MAX_TOKENS unset.
const { toolOffer } = loadConfig({ OPENAI_API_KEY: 'sk-test' }).agent.loop;
const NOTE = 'The release train leaves on Thursday.';
const READ = 'fs__read_text_file';

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;
let root: string;
const sources: McpToolSource[] = [];

/** The official servers, started as mcp.json names them: everything (14 tools) and filesystem (14). */
async function servers(withEverything: boolean): Promise<McpToolSource> {
  const fs = { command: process.execPath, args: [FILESYSTEM_SERVER, root] };
  const everything = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] };
  const config = parseMcpConfig(
    JSON.stringify({ mcpServers: withEverything ? { everything, fs } : { fs } }),
    join(root, 'mcp.json'),
    process.env,
    new Set(),
  );
  const source = await McpToolSource.start(config, silentLogger, {
    maxMessageBytes: 10_485_760,
    binaryMaxBytes: 0,
  });
  sources.push(source);
  return source;
}

/**
 * An agent as main.ts wires one: the built-ins, load_tools and find_tools among them, and the
 * servers; with `fixtures`, the test suite's realistic tools beside them.
 */
function agentOver(source: McpToolSource, fixtures = 0): Agent {
  const tools: ToolRegistry = toolsWithPages(store, [
    source,
    builtinSource([loadToolsTool(() => tools.list()), findToolsTool(() => tools.list())]),
    builtinSource(
      MANY_TOOLS.slice(0, fixtures).map((spec) => ({
        spec,
        run: async () => ({ content: 'Done.', isError: false }),
      })),
    ),
  ]);
  return new Agent(
    { llm: openAiClientFor(fake), tools, store, logger: silentLogger },
    { ...defaultAgentOptions, toolOffer },
  );
}

type SentTool = { function: { name: string; description?: string; parameters?: unknown } };
const sentTools = (request: ChatRequest) => (request.tools ?? []) as SentTool[];
const sentNames = (request: ChatRequest) => sentTools(request).map((t) => t.function.name);
const call = (name: string, args: object) => ({
  toolCalls: [{ id: 'call_0', name, arguments: JSON.stringify(args) }],
});

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
  root = await mkdtemp(join(tmpdir(), 'spool-tool-loading-'));
  await writeFile(join(root, 'notes.txt'), `${NOTE}\n`);
});
afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await fake.stop();
  await db.close();
  await rm(root, { recursive: true, force: true });
});

describe('tool loading with the everything and filesystem servers (29 tools), by default', () => {
  let source: McpToolSource;
  let conversation: Conversation;
  beforeAll(async () => {
    source = await servers(true);
    expect(source.tools()).toHaveLength(29);
    conversation = await store.openConversation(uniqueKey());
  });

  it('sends a catalogue first; the model loads a tool, its schema is in the next request, and the call runs', async () => {
    const before = fake.requests.length;
    fake.enqueue(
      call('load_tools', { names: [READ] }),
      call(READ, { path: join(root, 'notes.txt') }),
      (request) => ({
        content: `It says: ${lastMessage(request).content}`,
      }),
    );
    const { reply, status } = await agentOver(source).runTurn(
      conversation,
      'What does notes.txt say?',
    );
    expect(status).toBe('ok');
    expect(reply).toContain(NOTE);

    const [first, second, third] = fake.requests.slice(before);
    // First: the built-ins and load_tools, whose description lists every server tool by server.
    expect(sentNames(first!)).toEqual(['get_continuation', 'load_tools']);
    const catalogue = sentTools(first!)[1]!.function.description!;
    expect(catalogue).toContain('\n[everything__]\necho: Echoes back the input string\n');
    expect(catalogue).toContain('\n[fs__]\n');
    expect(catalogue).toContain(
      '\nread_text_file: Read the complete contents of a file from the…\n',
    );
    expect(catalogue.split('\n')).toHaveLength(1 + 2 + 29);
    expect(JSON.stringify(first!.tools).length).toBeLessThan(
      JSON.stringify(source.tools().map((t) => t.spec)).length / 2,
    );

    // Then the loaded tool's whole schema, after the unchanged start of the tools.
    expect(lastMessage(second!).content).toBe(`Loaded ${READ}: call it now.`);
    expect(sentNames(second!)).toEqual(['get_continuation', 'load_tools', READ]);
    expect(second!.tools!.slice(0, 2)).toEqual(first!.tools);
    const schema = source.tools().find((t) => t.spec.name === READ)!.spec;
    expect(sentTools(second!)[2]!.function).toMatchObject({
      description: schema.description,
      parameters: schema.parameters,
    });
    expect(lastMessage(third!).content).toContain(NOTE);
    expect(third!.tools).toEqual(second!.tools);
  });

  it('keeps what was loaded in later turns, and after a restart (a new agent over the store)', async () => {
    const before = fake.requests.length;
    fake.enqueue({ content: 'You are welcome!' });
    expect((await agentOver(source).runTurn(conversation, 'Thanks!')).status).toBe('ok');
    expect(sentNames(fake.requests[before]!)).toEqual(['get_continuation', 'load_tools', READ]);
  });

  it('runs a call of a tool not loaded yet, and loads it', async () => {
    const other = await store.openConversation(uniqueKey());
    const before = fake.requests.length;
    fake.enqueue(call('everything__echo', { message: 'hello there' }), (request) => ({
      content: `echoed: ${lastMessage(request).content}`,
    }));
    const { reply, status } = await agentOver(source).runTurn(other, 'Echo hello there');
    expect(status).toBe('ok');
    expect(reply).toContain('hello there');
    const [first, second] = fake.requests.slice(before);
    expect(sentNames(first!)).toEqual(['get_continuation', 'load_tools']);
    expect(sentNames(second!)).toEqual(['get_continuation', 'load_tools', 'everything__echo']);
  });

  it('answers a load of names that are no tools with an error the model can act on', async () => {
    const other = await store.openConversation(uniqueKey());
    const before = fake.requests.length;
    fake.enqueue(call('load_tools', { names: ['fs__format_disk'] }), { content: 'No such tool.' });
    expect((await agentOver(source).runTurn(other, 'Format the disk')).status).toBe('ok');
    const second = fake.requests[before + 1]!;
    expect(JSON.parse(lastMessage(second).content!)).toEqual({
      error: 'Nothing loaded. Not in the list: fs__format_disk.',
    });
    expect(sentNames(second)).toEqual(['get_continuation', 'load_tools']);
  });
});

describe('one filesystem server (14 tools), by default', () => {
  it('changes nothing: every schema is sent, and no load_tools', async () => {
    const source = await servers(false);
    const conversation = await store.openConversation(uniqueKey());
    const before = fake.requests.length;
    fake.enqueue({ content: 'Hello!' });
    expect((await agentOver(source).runTurn(conversation, 'Hi')).status).toBe('ok');
    const names = sentNames(fake.requests[before]!);
    expect(names).toHaveLength(15);
    expect(names).toContain(READ);
    expect(names).not.toContain('load_tools');
  });
});

describe('200 tools (filesystem beside 186 realistic ones), by default', () => {
  it('sends find_tools, no catalogue; what it finds joins the end of the tools, and stays after a restart', async () => {
    const source = await servers(false);
    const conversation = await store.openConversation(uniqueKey());
    const before = fake.requests.length;
    fake.enqueue(
      call('find_tools', { query: 'read the contents of a text file' }),
      call(READ, { path: join(root, 'notes.txt') }),
      (request) => ({ content: `It says: ${lastMessage(request).content}` }),
    );
    const { reply, status } = await agentOver(source, 186).runTurn(
      conversation,
      'What does notes.txt say?',
    );
    expect(status).toBe('ok');
    expect(reply).toContain(NOTE);

    const [first, second, third] = fake.requests.slice(before);
    expect(sentNames(first!)).toEqual(['get_continuation', 'find_tools']);
    const found = sentNames(second!).slice(2);
    expect(found).toContain(READ);
    expect(found.length).toBeLessThanOrEqual(5);
    expect(second!.tools!.slice(0, 2)).toEqual(first!.tools);
    expect(lastMessage(second!).content!.split('\n').slice(1)).toEqual(found);
    expect(third!.tools).toEqual(second!.tools);

    fake.enqueue({ content: 'You are welcome!' });
    expect((await agentOver(source, 186).runTurn(conversation, 'Thanks!')).status).toBe('ok');
    expect(fake.requests.at(-1)!.tools).toEqual(second!.tools);
  });
});
