// Each quirk of an OpenAI-compatible server, reproduced by the fake over HTTP and met by the real
// openai SDK through Spool's client, as each server's own issue tracker reports it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import type { Database } from '../../src/store/database.ts';
import { OpenAiChatClient } from '../../src/llm/openai-client.ts';
import { lastMessage, openAiClientFor, testAgent, testTool } from '../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { fileReader } from '../../src/files/file-reader.ts';

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
});
afterAll(async () => {
  await fake.stop();
  await db.close();
});
beforeEach(() => {
  fake.quirks = {};
  fake.requests.length = 0;
  fake.rejections.length = 0;
  fake.truncatedPrompts = 0;
  fake.fallback = undefined;
  fake.imageInput = false;
});

describe('Ollama: a prompt over its context window is cut silently', () => {
  const report = testTool('report', () => ({
    content: `${'report line\n'.repeat(700)}THE END`,
    isError: false,
  }));

  /** Two turns: the first reads an 8,400-char report, the second asks about it. */
  async function twoTurns(contextTokens?: number) {
    fake.quirks.truncatePromptChars = 4_000;
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user' && last.content === 'read the report')
        return { toolCalls: [{ id: 'r', name: 'report', arguments: '{}' }] };
      return { content: `messages: ${request.messages.length}` };
    };
    const agent = testAgent({
      fake,
      store,
      tools: [report],
      llm: openAiClientFor(fake, 0, { contextTokens }),
    });
    const conversation = await store.openConversation(uniqueKey());
    await agent.runTurn(conversation, 'read the report');
    return agent.runTurn(conversation, 'what was at its end?');
  }

  it('without OPENAI_CONTEXT_TOKENS the fake cuts the prompt, as Ollama does', async () => {
    await twoTurns();
    expect(fake.truncatedPrompts).toBeGreaterThan(0);
  });

  it('with OPENAI_CONTEXT_TOKENS Spool compacts before sending, so nothing is cut and nothing is refused', async () => {
    const { status } = await twoTurns(2_000);
    expect(status).toBe('ok');
    expect(fake.truncatedPrompts).toBe(0);
    expect(fake.rejections).toEqual([]);
    // Three model calls for three steps: the estimate, not a refusal, chose the compaction.
    expect(fake.requests).toHaveLength(3);
    const report = fake.requests[2]!.messages.find((m) => m.role === 'tool')!.content!;
    expect(report.length).toBeLessThan(2_000);
    expect(report).toContain('get_continuation');
  });
});

describe('vLLM without its tool parser refuses tool_choice "auto"', () => {
  it('tells the user, in one sentence, the flags the server needs', async () => {
    fake.quirks.noToolParser = true;
    const { status, reply } = await testAgent({
      fake,
      store,
      tools: [testTool('x', () => ({ content: '', isError: false }))],
    }).runTurn(await store.openConversation(uniqueKey()), 'hi');
    expect(status).toBe('failed');
    expect(reply).toBe(
      'Sorry, the language model request failed: the model server does not parse tool calls; whoever runs it should start vLLM with --enable-auto-tool-choice and a --tool-call-parser for this model.',
    );
  });
});

describe('LM Studio refuses tool_choice in object form, and streamed tool calls lose their names', () => {
  it('gets only string tool_choice and no streaming, through a tool turn and a forced answer', async () => {
    fake.quirks.lmStudio = true;
    fake.fallback = (request) =>
      request.tool_choice === 'none'
        ? { content: 'answered' }
        : { toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }] };
    const agent = testAgent({
      fake,
      store,
      tools: [testTool('look', () => ({ content: 'seen', isError: false }))],
      overrides: { maxToolIterations: 1 },
    });
    expect((await agent.runTurn(await store.openConversation(uniqueKey()), 'look')).reply).toBe(
      'answered',
    );
    expect(fake.requests.map((r) => r.tool_choice)).toEqual(['auto', 'none']);
    expect(fake.rejections).toEqual([]);
  });
});

describe('llama.cpp makes parallel calls only when asked, and numbers every call alike', () => {
  it('sends parallel_tool_calls with OPENAI_PARALLEL_TOOL_CALLS=true, and runs both calls of one id', async () => {
    const look = testTool('look', (args) => ({
      content: `saw ${String(args.at)}`,
      isError: false,
    }));
    fake.fallback = (request) => {
      if (lastMessage(request).role === 'tool')
        return {
          content: request.messages
            .filter((m) => m.role === 'tool')
            .map((m) => m.content)
            .join(', '),
        };
      const calls = [
        { id: 'call_0', name: 'look', arguments: '{"at":"left"}' },
        { id: 'call_0', name: 'look', arguments: '{"at":"right"}' },
      ];
      return { toolCalls: request.parallel_tool_calls ? calls : calls.slice(0, 1) };
    };
    const agent = testAgent({
      fake,
      store,
      tools: [look],
      llm: openAiClientFor(fake, 0, { parallelToolCalls: true }),
    });
    expect(
      (await agent.runTurn(await store.openConversation(uniqueKey()), 'look both ways')).reply,
    ).toBe('saw left, saw right');
    expect(fake.requests[0]!.parallel_tool_calls).toBe(true);
    expect(fake.rejections).toEqual([]);
  });
});

describe('Azure OpenAI: deployments, api-version and the api-key header', () => {
  const azure = {
    deployment: 'spool-gpt4o',
    apiVersion: '2024-10-21',
    apiKey: 'azure-key-0123456789',
  };
  const client = (apiKey: string) =>
    new OpenAiChatClient({
      apiKey,
      azure: { endpoint: fake.origin, apiVersion: azure.apiVersion },
      model: azure.deployment,
      maxTokens: 256,
      maxRetries: 0,
      timeoutMs: 10_000,
    });

  it('answers through the deployment, and the startup check passes', async () => {
    fake.quirks.azure = azure;
    fake.enqueue({ content: 'from azure' });
    expect(await client(azure.apiKey).checkEndpoint()).toBeUndefined();
    expect(
      (
        await testAgent({ fake, store, llm: client(azure.apiKey) }).runTurn(
          await store.openConversation(uniqueKey()),
          'hi',
        )
      ).reply,
    ).toBe('from azure');
  });

  it('names a refused key at startup', async () => {
    fake.quirks.azure = azure;
    expect(await client('wrong-key-0123456789').checkEndpoint()).toBe(
      `${fake.origin} refused the API key (401): check AZURE_OPENAI_API_KEY`,
    );
  });
});

describe('image input (OPENAI_IMAGE_INPUT)', () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

  async function shareImage(imageInput: boolean) {
    fake.imageInput = imageInput;
    fake.images.length = 0;
    fake.fallback = (request) => ({
      content: `saw ${request.messages
        .filter((m) => m.role === 'tool')
        .map((m) => m.content)
        .join(' ')}`,
    });
    const outcome = await fileReader({ binaryMaxBytes: 1_000 }).read(
      {
        name: 'chart.png',
        mimeType: 'image/png',
        sizeBytes: png.length,
        url: 'https://files.slack.com/c',
      },
      png,
    );
    const agent = testAgent({ fake, store, llm: openAiClientFor(fake, 0, { imageInput }) });
    const conversation = await store.openConversation(uniqueKey());
    const files = async () => [
      { name: 'chart.png', mimeType: 'image/png', sizeBytes: png.length, outcome },
    ];
    const first = await agent.runTurn(conversation, 'what does this chart show?', { files });
    const later = await agent.runTurn(conversation, 'and now?');
    return { first, later };
  }

  it('sends a shared image to a model that takes images, in its own turn only', async () => {
    const { first } = await shareImage(true);
    expect(fake.rejections).toEqual([]);
    expect(fake.images).toEqual([`data:image/png;base64,${png.toString('base64')}`]);
    expect(first.reply).toContain('[image "chart.png", image/png');
    // The image follows the result it belongs to, as a user message of parts.
    expect(fake.requests[0]!.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'user',
    ]);
  });

  it('only describes it to a model that does not, which would refuse an image part', async () => {
    await shareImage(false);
    expect(fake.rejections).toEqual([]);
    expect(fake.images).toEqual([]);
    expect(fake.requests[0]!.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
  });
});
