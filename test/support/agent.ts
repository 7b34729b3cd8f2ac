import type { AgentHooks } from '../../src/core/agent/hooks.ts';
import { Agent, type AgentOptions } from '../../src/core/agent/agent.ts';
import type { Logger } from '../../src/core/logger.ts';
import type { LlmPort } from '../../src/core/ports/llm.ts';
import type { StorePort } from '../../src/core/ports/store.ts';
import type { ToolContext, ToolOutcome } from '../../src/core/ports/tools.ts';
import { OpenAiChatClient, type OpenAiClientOptions } from '../../src/llm/openai-client.ts';
import { builtinSource, ToolRegistry, type ToolSource } from '../../src/tools/registry.ts';
import { getContinuationTool, type PageOptions } from '../../src/core/builtins/get-continuation.ts';
import type { Tool } from '../../src/core/ports/tools.ts';
import type { FakeOpenAi } from './fake-openai.ts';
import { silentLogger } from './logger.ts';

export const defaultAgentOptions: AgentOptions = {
  systemPrompt: 'You are a test.',
  budget: { maxChars: 20_000, turnBudgetChars: 200_000, headChars: 4_000, tailChars: 1_000 },
  compaction: {
    minChars: 500,
    horizonTurns: 20,
    headChars: 2_000,
    tailChars: 500,
  },
  userPreview: { maxChars: 20_000, headChars: 4_000, tailChars: 1_000 },
  maxContinuations: 3,
  maxToolIterations: 20,
  resultIntake: {
    storeMaxChars: 5_000_000,
    maskSecrets: (text) => text,
    redactSecretPatterns: false,
  },
};

export const defaultPageOptions: PageOptions = { chunkChars: 20_000, maxPages: 50 };

/** The sources' tools with get_continuation over `store`, last, as a test's agent offers them. */
export function toolsWithPages(
  store: StorePort,
  sources: ToolSource[],
  pages: Partial<PageOptions> = {},
): ToolRegistry {
  return new ToolRegistry([
    ...sources,
    builtinSource([getContinuationTool(store, { ...defaultPageOptions, ...pages })]),
  ]);
}

/** A tool defined inline by a test, with the calls it received. */
export function testTool(
  name: string,
  run: (args: Record<string, unknown>, context: ToolContext) => Promise<ToolOutcome> | ToolOutcome,
): Tool & { calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  return {
    calls,
    spec: {
      name,
      description: `test tool ${name}`,
      parameters: { type: 'object', properties: {} },
    },
    async run(args, context) {
      calls.push(args);
      return run(args, context);
    },
  };
}

export function openAiClientFor(
  fake: FakeOpenAi,
  maxRetries = 0,
  options: Partial<OpenAiClientOptions> = {},
): OpenAiChatClient {
  return new OpenAiChatClient({
    apiKey: 'sk-test',
    baseURL: fake.baseURL,
    model: 'fake-model',
    maxTokens: 256,
    maxRetries,
    timeoutMs: 10_000,
    ...options,
  });
}

export function testAgent(options: {
  fake: FakeOpenAi;
  store: StorePort;
  tools?: Tool[];
  /** Tool sources besides `tools` (an MCP source's servers). */
  sources?: ToolSource[];
  logger?: Logger;
  overrides?: Partial<AgentOptions>;
  pages?: Partial<PageOptions>;
  maxRetries?: number;
  hooks?: AgentHooks;
  /** A client set up for a particular server; by default one for the fake with the test model. */
  llm?: LlmPort;
}): Agent {
  return new Agent(
    {
      llm: options.llm ?? openAiClientFor(options.fake, options.maxRetries),
      tools: toolsWithPages(
        options.store,
        [...(options.sources ?? []), builtinSource(options.tools ?? [])],
        options.pages,
      ),
      store: options.store,
      logger: options.logger ?? silentLogger,
      hooks: options.hooks,
    },
    { ...defaultAgentOptions, ...options.overrides },
  );
}

type WireMessage = { role: string; content?: string | null; tool_call_id?: string };

export const lastMessage = (request: { messages: WireMessage[] }) =>
  request.messages[request.messages.length - 1]!;

/**
 * The ids Spool gave the calls of the request's newest assistant message (the model's own ids are
 * replaced).
 */
export function sentCallIds(request: {
  messages: Array<{ role: string; tool_calls?: Array<{ id: string }> }>;
}): string[] {
  const assistant = [...request.messages]
    .reverse()
    .find((m) => m.role === 'assistant' && m.tool_calls?.length);
  return assistant?.tool_calls?.map((c) => c.id) ?? [];
}

const MARKER = /Read on with get_continuation\(tool_call_id="([^"]+)", offset=(\d+)\)/;

/** The offset a truncation marker at the end of a tool message asks for, if any. */
export function nextOffset(content: string): number | undefined {
  const match = MARKER.exec(content);
  return match ? Number(match[2]) : undefined;
}

/** The tool_call_id a truncation marker names: the id Spool gave the call. */
export function markedCallId(content: string): string | undefined {
  return MARKER.exec(content)?.[1];
}
