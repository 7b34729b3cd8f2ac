import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type AgentOptions } from '../../../src/core/agent/agent.ts';
import { storeCapMarker } from '../../../src/core/markers.ts';
import { secretMasker } from '../../../src/core/redact.ts';
import type { Conversation } from '../../../src/core/ports/conversation.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import {
  defaultAgentOptions,
  lastMessage,
  openAiClientFor,
  sentCallIds,
  toolsWithPages,
} from '../../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';

const SERVER = fileURLToPath(new URL('../../fixtures/hostile-mcp-server.mjs', import.meta.url));
const LEAKED = 'xoxb-2222-hostile-test-token';
// The defaults a deployment gets: the store's cap and the MCP message limit derived from it.
const defaults = loadConfig({ OPENAI_API_KEY: 'sk-test' });

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;
const sources: McpToolSource[] = [];

async function hostileServer(limits: {
  maxMessageBytes: number;
  binaryMaxBytes: number;
}): Promise<McpToolSource> {
  const config = parseMcpConfig(
    JSON.stringify({
      mcpServers: { hostile: { command: process.execPath, args: [SERVER], env: { LEAKED } } },
    }),
    'mcp.json',
    {},
    new Set(),
  );
  const source = await McpToolSource.start(config, silentLogger, limits);
  sources.push(source);
  return source;
}

function agentOver(
  source: McpToolSource,
  intake: Partial<AgentOptions['resultIntake']> = {},
): Agent {
  const resultIntake = {
    ...defaultAgentOptions.resultIntake,
    storeMaxChars: defaults.agent.loop.resultIntake.storeMaxChars,
    ...intake,
  };
  return new Agent(
    {
      llm: openAiClientFor(fake),
      tools: toolsWithPages(store, [source]),
      store,
      logger: silentLogger,
    },
    { ...defaultAgentOptions, resultIntake },
  );
}

/**
 * One turn in a new conversation: the model calls `tool`, then answers with the end of what it
 * read.
 */
async function callThrough(
  agent: Agent,
  tool: string,
  args: object = {},
): Promise<{ conversation: Conversation; reply: string; sent: string; stored: string }> {
  let sent = '';
  fake.enqueue(
    { toolCalls: [{ id: 'c1', name: `hostile__${tool}`, arguments: JSON.stringify(args) }] },
    (request) => {
      sent = lastMessage(request).content ?? '';
      return { content: `read ${sent.length} chars` };
    },
  );
  const conversation = await store.openConversation(uniqueKey());
  const { reply, status } = await agent.runTurn(conversation, `run ${tool}`);
  expect(status).toBe('ok');
  const id = sentCallIds(fake.requests.at(-1)!)[0]!;
  return { conversation, reply, sent, stored: (await store.readToolResult(conversation, id))! };
}

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
});
afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await fake.stop();
  await db.close();
});

describe('hostile tool results from a real MCP stdio server, with the default limits', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = agentOver(
      await hostileServer({
        maxMessageBytes: defaults.tools.maxMessageBytes,
        binaryMaxBytes: 1_000,
      }),
    );
  });

  it('keeps a 50 MB result up to the store cap, with a marker the model reads in its preview', async () => {
    const { stored, sent, reply } = await callThrough(agent, 'huge', { chars: 50_000_000 });
    const marker = storeCapMarker(defaults.agent.loop.resultIntake.storeMaxChars, 50_000_000);
    expect(stored.length).toBe(defaults.agent.loop.resultIntake.storeMaxChars + 1 + marker.length);
    expect(stored.endsWith(`\n${marker}`)).toBe(true);
    expect(sent.endsWith(marker)).toBe(true);
    expect(reply).toBe(`read ${sent.length} chars`);
  });

  it('writes structured content 3,000 levels deep as compact JSON, whole', async () => {
    const { stored } = await callThrough(agent, 'deep', { depth: 3_000 });
    expect(stored).toContain('"bottom":"DEEPEST VALUE"');
    expect(stored.match(/"level":/g)).toHaveLength(3_000);
    expect(stored.length).toBeLessThan(100_000);
  });

  it('describes binary parts to the model and keeps their bytes, up to the cap, in the store', async () => {
    const { stored, sent } = await callThrough(agent, 'binary');
    expect(sent).toContain('[image: image/png, 14 bytes, stored, not shown]');
    expect(stored).toContain(
      '[resource file:///big.zip: application/zip, 3000 bytes, not stored (over TOOL_RESULT_BINARY_MAX_BYTES), not shown]',
    );
    const rows = await db.prisma.toolResultBinary.findMany({
      where: { result: { content: stored } },
      orderBy: { position: 'asc' },
    });
    expect(
      rows.map((r) => [r.kind, r.sizeBytes, r.data && Buffer.from(r.data).toString('hex')]),
    ).toEqual([
      ['image', 14, '89504e470d0a1a0a0000000dfffe'],
      ['resource', 3_000, null],
    ]);
  });

  it('makes lone surrogates, NUL and bytes that are not UTF-8 well-formed before they are stored or sent, and keeps whole characters', async () => {
    const { stored, sent } = await callThrough(agent, 'garbled');
    expect(stored).toBe(
      'lone \ufffd high, lone \ufffd low, NUL \ufffd here, emoji 😀 whole, bytes \ufffd\ufffd\ufffd raw\n[This result held NUL bytes, so it looks binary: each was replaced by U+FFFD.]',
    );
    expect(sent).toBe(stored);
  });
});

describe('tool-call arguments with a NUL in them', () => {
  it('are stored (the NUL made U+FFFD, as jsonb requires), the call runs, and the next turn is accepted', async () => {
    const agent = agentOver(await hostileServer({ maxMessageBytes: 1_000_000, binaryMaxBytes: 0 }));
    const conversation = await store.openConversation(uniqueKey());
    // A raw NUL inside the arguments' JSON text, as a model can send (the wire escapes it once).
    fake.enqueue(
      { toolCalls: [{ id: 'n', name: 'hostile__echo', arguments: '{"text":"a\u0000b"}' }] },
      (request) => ({ content: `echoed ${lastMessage(request).content}` }),
    );
    expect(await agent.runTurn(conversation, 'echo a NUL')).toMatchObject({ status: 'ok' });
    fake.enqueue({ content: 'still fine' });
    expect((await agent.runTurn(conversation, 'and now?')).reply).toBe('still fine');
    const [call] = await db.prisma.toolCall.findMany({
      where: { conversationId: conversation.id },
    });
    expect(call!.arguments).toBe('{"text":"a\ufffdb"}');
    expect(fake.rejections).toEqual([]);
  });
});

describe('a result too big for the MCP message limit', () => {
  it('comes back as a clear error, and the same server answers the next call', async () => {
    const agent = agentOver(await hostileServer({ maxMessageBytes: 1_000_000, binaryMaxBytes: 0 }));
    const seen: string[] = [];
    fake.enqueue(
      {
        toolCalls: [
          { id: 'big', name: 'hostile__huge', arguments: JSON.stringify({ chars: 2_000_000 }) },
        ],
      },
      (request) => {
        seen.push(lastMessage(request).content ?? '');
        return {
          toolCalls: [
            {
              id: 'small',
              name: 'hostile__echo',
              arguments: JSON.stringify({ text: 'still connected' }),
            },
          ],
        };
      },
      (request) => {
        seen.push(lastMessage(request).content ?? '');
        return { content: 'done' };
      },
    );
    const { status } = await agent.runTurn(
      await store.openConversation(uniqueKey()),
      'read it all',
    );
    expect(status).toBe('ok');
    expect(JSON.parse(seen[0]!).error).toMatch(
      /^huge on MCP server "hostile" failed: .*The server's reply was 20\d{5} bytes, over the MCP message limit of 1000000 bytes, so it was not read\.$/,
    );
    expect(seen[1]).toBe('still connected');
  });
});

describe('secrets in tool results', () => {
  it("masks the bot's own secrets always, and known credential formats when TOOL_RESULT_REDACT_SECRETS is on", async () => {
    const source = await hostileServer({ maxMessageBytes: 1_000_000, binaryMaxBytes: 0 });
    const text = `env: TOKEN=${LEAKED} key AKIAIOSFODNN7EXAMPLE`;
    const off = await callThrough(
      agentOver(source, { maskSecrets: secretMasker([LEAKED]) }),
      'echo',
      { text },
    );
    expect(off.stored).toBe('env: TOKEN=[redacted] key AKIAIOSFODNN7EXAMPLE');
    const on = await callThrough(
      agentOver(source, { maskSecrets: secretMasker([LEAKED]), redactSecretPatterns: true }),
      'echo',
      { text },
    );
    expect(on.stored).toBe('env: TOKEN=[redacted] key [redacted AWS access key]');
    expect(on.sent).toBe(on.stored);
  });
});

describe('after all of that', () => {
  it('the strict API refused nothing, and the bot still answers a plain message', async () => {
    fake.enqueue({ content: 'hello again' });
    const source = await hostileServer({ maxMessageBytes: 1_000_000, binaryMaxBytes: 0 });
    expect(
      (await agentOver(source).runTurn(await store.openConversation(uniqueKey()), 'hi')).reply,
    ).toBe('hello again');
    expect(fake.rejections).toEqual([]);
  });
});
