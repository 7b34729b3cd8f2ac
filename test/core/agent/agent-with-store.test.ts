import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/core/agent/agent.ts';
import { CONTINUE_PROMPT } from '../../../src/core/agent/resume/resume.ts';
import type { AgentHooks, StepEvent, TurnEvent } from '../../../src/core/agent/hooks.ts';
import type { Conversation } from '../../../src/core/ports/conversation.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { OpenAiChatClient } from '../../../src/llm/openai-client.ts';
import { ToolRegistry } from '../../../src/tools/registry.ts';
import {
  defaultAgentOptions,
  lastMessage,
  markedCallId,
  nextOffset,
  openAiClientFor,
  sentCallIds,
  testAgent,
  testTool,
} from '../../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { parsePage } from '../../../src/core/markers.ts';
import { RecordingLogger, silentLogger } from '../../support/logger.ts';

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;
let conversation: Conversation;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
});
afterAll(async () => {
  await fake.stop();
  await db.close();
});
beforeEach(async () => {
  fake.requests.length = 0;
  fake.rejections.length = 0;
  fake.fallback = undefined;
  fake.maxContextChars = undefined;
  fake.contextTokens = undefined;
  conversation = await store.openConversation(uniqueKey());
});

const toolMessages = (request: ChatRequest) => request.messages.filter((m) => m.role === 'tool');

describe('tool result continuation', () => {
  // 60,000 chars of numbered lines; the fact the answer needs is in the last 1,000.
  const full =
    Array.from(
      { length: 1225 },
      (_, i) => `line ${String(i).padStart(4, '0')} ${'·'.repeat(38)}`,
    ).join('\n') + '\nTHE VAULT CODE IS 7319\n';

  it('is a result of at least 60,000 chars', () => {
    expect(full.length).toBeGreaterThanOrEqual(60_000);
  });

  it('lets the model read a 60,000-char result page by page, and keeps every page in view to the end', async () => {
    const dump = testTool('dump', () => ({ content: full, isError: false }));
    let page = 0;
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user')
        return { toolCalls: [{ id: 'call_dump', name: 'dump', arguments: '{}' }] };
      const offset = nextOffset(last.content ?? '');
      if (offset !== undefined) {
        return {
          toolCalls: [
            {
              id: `call_page_${++page}`,
              name: 'get_continuation',
              arguments: JSON.stringify({ tool_call_id: markedCallId(last.content ?? ''), offset }),
            },
          ],
        };
      }
      // Answers from everything its request shows: the first line and the code.
      const seen = request.messages.map((m) => m.content ?? '').join('\n');
      return {
        content: `${/line 0000/.test(seen) ? 'From line 0000' : 'Without the start'}: ${/THE VAULT CODE IS \d+/.exec(seen)?.[0]}`,
      };
    };
    // Pages of 20,000 chars (CONTINUATION_CHUNK_CHARS), as this test reads them: with the window
    // known a page would take the whole rest. A window that holds the whole result in view: o200k
    // counts it 30,634 tokens, past the default 32,768 with the margin of an unknown tokenizer.
    const agent = testAgent({
      fake,
      store,
      tools: [dump],
      pages: { maxChunkChars: 20_000 },
      llm: openAiClientFor(fake, 0, { contextTokens: 128_000 }),
    });

    const { reply, status } = await agent.runTurn(conversation, 'dump it and tell me the code');

    expect(status).toBe('ok');
    expect(reply).toBe('From line 0000: THE VAULT CODE IS 7319');
    expect(fake.rejections).toEqual([]);
    const preview = lastMessage(fake.requests[1]!).content!;
    expect(preview.length).toBeLessThan(5_300);
    const dumpId = sentCallIds(fake.requests[1]!)[0]!;
    expect(preview).toContain(
      `/${full.length} chars. Read on with get_continuation(tool_call_id="${dumpId}", offset=`,
    );
    expect(fake.requests).toHaveLength(
      2 + Math.ceil((full.length - preview.indexOf('\n[truncated')) / 20_000),
    );
    // The last request holds the preview and every page: each line of the result once, none twice.
    const final = toolMessages(fake.requests.at(-1)!).map((m) => m.content ?? '');
    expect(final.at(-1)).toMatch(
      new RegExp(`you have all ${full.length} chars of it in view\\.\\]$`),
    );
    const visible = final
      .map((c) =>
        c.replace(/\n?\[(?:truncated —|showing |\d+-\d+: in view above)[^\]\n]*\]\n?/g, ''),
      )
      .join('');
    expect(visible.length).toBe(full.length);
    // Within the turn each request is the one before it, plus the newest step: prompt caches keep
    // the prefix.
    for (const [i, request] of fake.requests.slice(1).entries()) {
      expect(
        JSON.stringify(request.messages).startsWith(
          JSON.stringify(fake.requests[i]!.messages).slice(0, -1),
        ),
      ).toBe(true);
    }
    // The full result is stored once, untruncated.
    expect(await store.readToolResult(conversation, dumpId)).toBe(full);
  });

  it('answers a bad get_continuation with a JSON error the model can act on', async () => {
    fake.enqueue(
      {
        toolCalls: [
          { id: 'g1', name: 'get_continuation', arguments: '{"tool_call_id":"nope","offset":0}' },
        ],
      },
      {
        toolCalls: [
          { id: 'g2', name: 'get_continuation', arguments: '{"tool_call_id":"nope","offset":-5}' },
        ],
      },
      { content: 'ok' },
    );
    await testAgent({ fake, store }).runTurn(conversation, 'page');
    const [unknown, negative] = [fake.requests[1]!, fake.requests[2]!].map((r) =>
      JSON.parse(lastMessage(r).content ?? ''),
    );
    expect(unknown).toEqual({ error: 'No stored tool result with tool_call_id "nope"' });
    expect(negative.error).toMatch(/offset must be a non-negative integer/);
  });

  it('keeps results of earlier turns retrievable', async () => {
    const agent = testAgent({
      fake,
      store,
      tools: [testTool('dump', () => ({ content: full, isError: false }))],
      // A 20,000-char page (CONTINUATION_CHUNK_CHARS), not the whole rest the window would hold.
      pages: { maxChunkChars: 20_000 },
    });
    fake.enqueue(
      { toolCalls: [{ id: 'early', name: 'dump', arguments: '{}' }] },
      { content: 'done' },
    );
    await agent.runTurn(conversation, 'first');
    const offset = 30_000;
    const early = sentCallIds(fake.requests[1]!)[0];
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'later',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: early, offset }),
          },
        ],
      },
      { content: 'read' },
    );
    await agent.runTurn(conversation, 'second');
    expect(toolMessages(fake.requests[3]!).pop()!.content).toMatch(
      new RegExp(`^${full.slice(offset, offset + 20_000)}\\n\\[showing 30000-50000/`),
    );
  });

  it("keeps the turn's reading within its budget in every request, the oldest pages giving way, and reads on to the end", async () => {
    const dump = testTool('dump', () => ({ content: full, isError: false }));
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user') return { toolCalls: [{ id: 'd', name: 'dump', arguments: '{}' }] };
      const offset = nextOffset(last.content ?? '');
      if (offset === undefined) return { content: 'read it all' };
      return {
        toolCalls: [
          {
            id: 'p',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: markedCallId(last.content ?? ''), offset }),
          },
        ],
      };
    };
    const budget = { ...defaultAgentOptions.budget, turnBudgetChars: 30_000 };
    const { reply } = await testAgent({
      fake,
      store,
      tools: [dump],
      overrides: { budget },
    }).runTurn(conversation, 'read the dump');
    expect(reply).toBe('read it all');
    // Pages are read whole: a spent budget no longer shrinks them, it makes older ones give way.
    const pages = (await store.loadTranscript(conversation))
      .flatMap((m) => (m.role === 'tool' ? [m.content] : []))
      .slice(1);
    expect(pages.slice(0, -1).map((p) => parsePage(p)!.text.length)).toEqual(
      pages.slice(0, -1).map(() => 20_000),
    );
    for (const request of fake.requests) {
      const shownPages = toolMessages(request).filter((m) =>
        /\[showing \d+-\d+\/\d+ chars of "/.test(m.content ?? ''),
      );
      expect(
        shownPages.reduce(
          (n, m) => n + (m.content ?? '').replace(/\n\[showing [^\n]*\]$/, '').length,
          0,
        ),
      ).toBeLessThanOrEqual(30_000);
    }
    expect(
      toolMessages(fake.requests.at(-1)!).filter((m) =>
        /^\[chars [\d, -]+ of "call_\w+", read earlier, left out here/.test(m.content ?? ''),
      ),
    ).toHaveLength(1);
  });

  it('caps get_continuation pages per turn and then asks for an answer', async () => {
    const agent = testAgent({
      fake,
      store,
      tools: [testTool('dump', () => ({ content: full, isError: false }))],
      pages: { maxPages: 2 },
    });
    let n = 0;
    fake.fallback = (request) =>
      request.tool_choice === 'none'
        ? { content: 'answering now' }
        : n === 0
          ? { toolCalls: [{ id: `d${n++}`, name: 'dump', arguments: '{}' }] }
          : {
              toolCalls: [
                {
                  id: `p${n++}`,
                  name: 'get_continuation',
                  arguments: '{"tool_call_id":"d0","offset":0}',
                },
              ],
            };
    const { reply } = await agent.runTurn(conversation, 'page forever');
    expect(reply).toBe('answering now');
    expect(fake.requests.length).toBe(5); // dump, 2 pages, 1 refused page, final answer
    expect(toolMessages(fake.requests[4]!).pop()!.content).toMatch(
      /get_continuation may be called 2 times in one turn, and that limit is reached/,
    );
  });
});

describe('per-turn budget', () => {
  it('cuts the largest results of a turn to previews first', async () => {
    const sizes = { a: 90_000, b: 60_000, c: 15_000 };
    const tools = Object.entries(sizes).map(([name, size]) =>
      testTool(name, () => ({ content: `${name}\n`.repeat(size / 2), isError: false })),
    );
    fake.enqueue(
      {
        toolCalls: Object.keys(sizes).map((name) => ({
          id: `call_${name}`,
          name,
          arguments: '{}',
        })),
      },
      { content: 'ok' },
    );
    // The character budget is what is tried: a window that holds what it keeps ('b\n' is a token a
    // character, so b alone is 60,000 tokens).
    const agent = testAgent({
      fake,
      store,
      tools,
      overrides: {
        budget: { maxChars: 100_000, turnBudgetChars: 100_000, headChars: 4_000, tailChars: 1_000 },
      },
      llm: openAiClientFor(fake, 0, { contextTokens: 1_000_000 }),
    });
    await agent.runTurn(conversation, 'run all three');
    const [a, b, c] = toolMessages(fake.requests[1]!).map((m) => m.content ?? '');
    expect(a).toContain('[truncated — showing');
    expect(b).toBe('b\n'.repeat(30_000));
    expect(c).toBe('c\n'.repeat(7_500));
  });
});

describe('max_tokens continuation', () => {
  it('joins a reply cut twice at max_tokens into one whole reply', async () => {
    const steps: StepEvent[] = [];
    fake.enqueue(
      { content: 'Part one, ', finishReason: 'length' },
      { content: 'part two, ', finishReason: 'length' },
      { content: 'part three.' },
    );
    const { reply, status } = await testAgent({
      fake,
      store,
      hooks: { onStepFinish: (e) => steps.push(e) },
    }).runTurn(conversation, 'tell a long story');
    expect({ reply, status }).toEqual({ reply: 'Part one, part two, part three.', status: 'ok' });
    expect(lastMessage(fake.requests[1]!)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    expect(lastMessage(fake.requests[2]!)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    expect(steps.map((s) => [s.finishReason, s.action])).toEqual([
      ['length', 'continue'],
      ['length', 'continue'],
      ['stop', 'answer'],
    ]);
  });

  it('stops at MAX_CONTINUATIONS and says the reply was cut', async () => {
    const steps: StepEvent[] = [];
    fake.fallback = { content: 'more ', finishReason: 'length' };
    const { reply, status } = await testAgent({
      fake,
      store,
      hooks: { onStepFinish: (e) => steps.push(e) },
    }).runTurn(conversation, 'never stop');
    expect(status).toBe('cut_off');
    expect(reply).toBe(
      `more more more more \n\n_(This reply was cut off at the model's output limit.)_`,
    );
    expect(fake.requests).toHaveLength(4);
    expect(steps.map((s) => s.action)).toEqual(['continue', 'continue', 'continue', 'stop']);
  });

  it('resets the continuation count only on new user input, not on tool results', async () => {
    const tool = testTool('t', () => ({ content: 'r', isError: false }));
    fake.enqueue(
      { content: 'a', finishReason: 'length' },
      { content: 'b', finishReason: 'length' },
      { toolCalls: [{ id: 't1', name: 't', arguments: '{}' }] },
      { content: 'c', finishReason: 'length' },
      { content: 'd', finishReason: 'length' },
    );
    const { reply, status } = await testAgent({
      fake,
      store,
      tools: [tool],
      overrides: { maxContinuations: 3 },
    }).runTurn(conversation, 'go');
    expect(status).toBe('cut_off');
    expect(reply.startsWith('cd')).toBe(true);
    expect(fake.pending).toBe(0);
  });

  it('dispatches complete tool calls from a truncated response and drops the cut one', async () => {
    const tool = testTool('t', () => ({ content: 'r', isError: false }));
    fake.enqueue(
      {
        finishReason: 'length',
        toolCalls: [
          { id: 'ok', name: 't', arguments: '{"x":1}' },
          { id: 'cut', name: 't', arguments: '{"x":' },
        ],
      },
      { content: 'done' },
    );
    await testAgent({ fake, store, tools: [tool] }).runTurn(conversation, 'go');
    expect(tool.calls).toEqual([{ x: 1 }]);
    expect(
      fake.requests[1]!.messages.filter((m) => m.role === 'assistant')[0]!.tool_calls!.map(
        (c) => c.function.arguments,
      ),
    ).toEqual(['{"x":1}']);
    expect(
      await db.prisma.toolCall.findMany({
        where: { conversationId: conversation.id, turn: 1 },
        select: { modelCallId: true },
      }),
    ).toEqual([{ modelCallId: 'ok' }]);
  });

  it('tries an empty cut-off reply once more with the larger budget, then says so plainly', async () => {
    const agent = testAgent({ fake, store, overrides: { retryMaxTokens: 8_000 } });
    fake.enqueue({ content: '', finishReason: 'length' }, { content: 'thought it through' });
    expect(await agent.runTurn(conversation, 'hard question')).toEqual({
      status: 'ok',
      reply: 'thought it through',
    });
    expect(fake.requests.map((r) => r.max_tokens)).toEqual([256, 8_000]);

    fake.requests.length = 0;
    fake.enqueue({ content: '', finishReason: 'length' }, { content: '', finishReason: 'length' });
    const { status, reply } = await agent.runTurn(conversation, 'harder question');
    expect(status).toBe('cut_off');
    expect(reply).toMatch(/cut off before it said anything, even with a larger output budget/);
    expect(fake.requests).toHaveLength(2);
  });

  it('stops continuing as soon as a continuation adds nothing new', async () => {
    fake.enqueue(
      { content: 'all there is', finishReason: 'length' },
      { content: ' \n', finishReason: 'length' },
    );
    const { status, reply } = await testAgent({
      fake,
      store,
      overrides: { retryMaxTokens: 8_000 },
    }).runTurn(conversation, 'go on');
    expect(status).toBe('cut_off');
    expect(reply).toBe(`all there is\n\n_(This reply was cut off at the model's output limit.)_`);
    // No third request: neither another continuation nor the larger-budget retry, which is for
    // replies with no text at all.
    expect(fake.requests).toHaveLength(2);
  });
});

describe('history repair', () => {
  it('gets a history with orphaned calls, orphaned results and duplicates accepted', async () => {
    await store.appendMessages(conversation, [
      { role: 'user', content: 'earlier', turn: 1 },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'lost', name: 't', arguments: '{}' }],
        turn: 1,
      },
      { role: 'tool', toolCallId: 'ghost', content: 'no call made me', turn: 1 },
      { role: 'user', content: 'hello?', turn: 2 },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'late', name: 't', arguments: '{}' }],
        turn: 2,
      },
      { role: 'assistant', content: 'interleaved', turn: 2 },
      { role: 'tool', toolCallId: 'late', content: 'arrived late', turn: 2 },
      { role: 'tool', toolCallId: 'late', content: 'arrived twice', turn: 2 },
    ]);
    fake.enqueue({ content: 'all good' });
    const { reply } = await testAgent({ fake, store }).runTurn(conversation, 'next');
    expect(reply).toBe('all good');
    expect(fake.rejections).toEqual([]);
    const sent = fake.requests[0]!.messages;
    // Finished turns' calls go by their aliases (turn 1's first call is t1c1).
    expect(sent.find((m) => m.tool_call_id === 't1c1')!.content).toMatch(/interrupted/);
    expect(sent.filter((m) => m.tool_call_id === 't2c1').map((m) => m.content)).toEqual([
      'arrived late',
    ]);
    expect(sent.some((m) => m.tool_call_id === 'ghost')).toBe(false);
  });

  it('the strict fake does reject the unrepaired history', async () => {
    const res = await fetch(`${fake.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'm',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'ghost', content: 'y' },
        ],
      }),
    });
    expect(res.status).toBe(400);
  });

  it("gives every call an id of its own, so ids a server reuses never collide, and keeps the model's", async () => {
    const tool = testTool('t', (args) => ({ content: `result ${String(args.n)}`, isError: false }));
    const agent = testAgent({ fake, store, tools: [tool] });
    fake.enqueue(
      { toolCalls: [{ id: 'call_0', name: 't', arguments: '{"n":1}' }] },
      { content: 'one' },
    );
    await agent.runTurn(conversation, 'first');
    fake.enqueue(
      { toolCalls: [{ id: 'call_0', name: 't', arguments: '{"n":2}' }] },
      { content: 'two' },
    );
    await agent.runTurn(conversation, 'second');
    expect(fake.rejections).toEqual([]);
    expect(toolMessages(fake.requests[3]!).map((m) => m.content)).toEqual(['result 1', 'result 2']);
    const rows = await db.prisma.toolCall.findMany({
      where: { conversationId: conversation.id },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => r.modelCallId)).toEqual(['call_0', 'call_0']);
    expect(rows.map((r) => r.toolCallId)).toEqual([
      expect.stringMatching(/^call_[0-9a-f]{32}$/),
      expect.stringMatching(/^call_[0-9a-f]{32}$/),
    ]);
    expect(rows[0]!.toolCallId).not.toBe(rows[1]!.toolCallId);
  });
});

describe('tool failures never escape the loop', () => {
  it('repairs malformed arguments, and answers unrepairable ones and unknown tools with errors', async () => {
    const tool = testTool('read', () => ({ content: 'file body', isError: false }));
    fake.enqueue(
      {
        toolCalls: [
          { id: 'a', name: 'read', arguments: "{'path': 'notes.md',}" },
          { id: 'b', name: 'read', arguments: '<path>notes.md</path>' },
          { id: 'c', name: 'nonexistent', arguments: '{}' },
        ],
      },
      { content: 'handled' },
    );
    const { reply } = await testAgent({ fake, store, tools: [tool] }).runTurn(
      conversation,
      'read notes',
    );
    expect(reply).toBe('handled');
    expect(tool.calls).toEqual([{ path: 'notes.md' }]);
    const [a, b, c] = toolMessages(fake.requests[1]!).map((m) => m.content ?? '');
    expect(a).toBe('file body');
    expect(JSON.parse(b!).error).toMatch(
      /^Invalid arguments for read: arguments are not valid JSON/,
    );
    expect(JSON.parse(c!).error).toMatch(
      /^Unknown tool "nonexistent"\. Available tools: read, get_continuation$/,
    );
  });

  it('turns a throwing tool into an error result', async () => {
    const tool = testTool('boom', () => {
      throw new Error('disk on fire');
    });
    fake.enqueue({ toolCalls: [{ id: 'x', name: 'boom', arguments: '{}' }] }, { content: 'sorry' });
    await testAgent({ fake, store, tools: [tool] }).runTurn(conversation, 'go');
    expect(JSON.parse(toolMessages(fake.requests[1]!)[0]!.content ?? '')).toEqual({
      error: 'Tool boom failed: disk on fire',
    });
  });

  it('sends emoji cut at every preview boundary as valid Unicode', async () => {
    const emoji = '😀'.repeat(15_000); // 30,000 UTF-16 units, no line breaks
    fake.enqueue(
      { toolCalls: [{ id: 'e', name: 'emoji', arguments: '{}' }] },
      {
        toolCalls: [
          { id: 'p', name: 'get_continuation', arguments: '{"tool_call_id":"e","offset":3999}' },
        ],
      },
      { content: 'ok' },
    );
    await testAgent({
      fake,
      store,
      tools: [testTool('emoji', () => ({ content: emoji, isError: false }))],
      overrides: {
        budget: { maxChars: 20_000, turnBudgetChars: 200_000, headChars: 3_999, tailChars: 999 },
      },
    }).runTurn(conversation, 'emoji');
    expect(fake.rejections).toEqual([]);
    expect(fake.requests).toHaveLength(3);
  });
});

describe('LLM failures', () => {
  it('retries rate limits and server errors, then succeeds', async () => {
    fake.enqueue(
      { status: 429, message: 'slow down', type: 'rate_limit_error' },
      { status: 503, message: 'overloaded', type: 'server_error' },
      { content: 'finally' },
    );
    const { reply } = await testAgent({ fake, store, maxRetries: 2 }).runTurn(conversation, 'hi');
    expect(reply).toBe('finally');
  });

  it('tells the user in one sentence and keeps the conversation usable', async () => {
    fake.enqueue({ status: 500, message: 'kaput', type: 'server_error' });
    const agent = testAgent({ fake, store });
    const failed = await agent.runTurn(conversation, 'first try');
    expect(failed).toEqual({
      status: 'failed',
      reply:
        'Sorry, the language model request failed: the model endpoint had a server error (500). Please try again.',
    });
    fake.enqueue({ content: 'back' });
    expect((await agent.runTurn(conversation, 'second try')).reply).toBe('back');
    expect(
      fake.requests[1]!.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ).toEqual(['first try', 'second try']);
  });

  it('says what a 404 means, once, without advising to try again, and never repeats our key', async () => {
    fake.enqueue({ status: 404, message: '404 page not found' });
    const notFound = await testAgent({ fake, store }).runTurn(conversation, 'hi');
    expect(notFound.reply).toBe(
      'Sorry, the language model request failed: the model endpoint answered 404 (page not found): OPENAI_BASE_URL probably needs /v1 at its end, or OPENAI_MODEL names no model there.',
    );
    fake.enqueue({
      status: 400,
      message: 'Invalid request from key sk-test-1234567890: bad',
      type: 'invalid_request_error',
    });
    const client = new OpenAiChatClient({
      apiKey: 'sk-test-1234567890',
      baseURL: fake.baseURL,
      model: 'fake-model',
      maxTokens: 256,
      maxRetries: 0,
      timeoutMs: 10_000,
    });
    const echoed = await new Agent(
      { llm: client, tools: new ToolRegistry([]), store, logger: silentLogger },
      defaultAgentOptions,
    ).runTurn(conversation, 'hi again');
    expect(echoed.reply).toBe(
      'Sorry, the language model request failed: the model endpoint rejected the request (400: Invalid request from key [redacted]: bad).',
    );
  });

  it('switches a reasoning model to max_completion_tokens on its refusal of max_tokens, once for the process', async () => {
    const client = new OpenAiChatClient({
      apiKey: 'sk-test',
      baseURL: fake.baseURL,
      model: 'o3-mini',
      maxTokens: 256,
      maxRetries: 0,
      timeoutMs: 10_000,
    });
    const agent = new Agent(
      { llm: client, tools: new ToolRegistry([]), store, logger: silentLogger },
      defaultAgentOptions,
    );
    fake.fallback = () => ({ content: 'reasoned' });
    expect((await agent.runTurn(conversation, 'think')).reply).toBe('reasoned');
    expect((await agent.runTurn(conversation, 'think again')).reply).toBe('reasoned');
    expect(fake.rejections).toEqual([
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    ]);
    expect(fake.requests.map((r) => [r.max_tokens, r.max_completion_tokens])).toEqual([
      [256, undefined],
      [undefined, 256],
      [undefined, 256],
    ]);
    fake.rejections.length = 0;
  });

  it('runs tool calls that come with finish_reason "stop" and empty ids, as Gemini sends them', async () => {
    const lookup = testTool('lookup', (args) => ({
      content: `found ${String(args.q)}`,
      isError: false,
    }));
    fake.enqueue(
      {
        toolCalls: [
          { id: '', name: 'lookup', arguments: '{"q":"a"}' },
          { id: '', name: 'lookup', arguments: '{"q":"b"}' },
        ],
        finishReason: 'stop',
      },
      { content: 'both found' },
    );
    const { reply } = await testAgent({ fake, store, tools: [lookup] }).runTurn(
      conversation,
      'look up a and b',
    );
    expect(reply).toBe('both found');
    expect(lookup.calls).toEqual([{ q: 'a' }, { q: 'b' }]);
    expect(fake.rejections).toEqual([]);
    expect(toolMessages(fake.requests.at(-1)!).map((m) => m.content)).toEqual([
      'found a',
      'found b',
    ]);
  });

  it('compacts harder on context overflow, then says so plainly if it still does not fit', async () => {
    const steps: StepEvent[] = [];
    const big = testTool('big', () => ({ content: 'x\n'.repeat(9_000), isError: false }));
    const agent = testAgent({
      fake,
      store,
      tools: [big],
      hooks: { onStepFinish: (e) => steps.push(e) },
    });
    for (let turn = 1; turn <= 3; turn++) {
      fake.enqueue(
        { toolCalls: [{ id: `b${turn}`, name: 'big', arguments: '{}' }] },
        { content: `answer ${turn}` },
      );
      await agent.runTurn(conversation, `question ${turn}`);
    }
    fake.requests.length = 0;
    steps.length = 0;
    // Finished turns are one line each; this turn's 18,000-char result cannot fit until it is cut.
    fake.maxContextChars = 5_000;
    fake.enqueue(
      { toolCalls: [{ id: 'b4', name: 'big', arguments: '{}' }] },
      { content: 'fits now' },
    );
    expect((await agent.runTurn(conversation, 'question 4')).reply).toBe('fits now');
    expect(fake.requests).toHaveLength(3);
    expect(steps.map((s) => s.level)).toEqual([0, 1]);
    expect(toolMessages(fake.requests[2]!).at(-1)!.content).toContain('[truncated');
    // The next turn starts at the level this conversation needed: no refused request first.
    fake.requests.length = 0;
    fake.enqueue(
      { toolCalls: [{ id: 'b5', name: 'big', arguments: '{}' }] },
      { content: 'fits at once' },
    );
    expect((await agent.runTurn(conversation, 'question 4b')).reply).toBe('fits at once');
    expect(fake.requests).toHaveLength(2);
    expect(
      toolMessages(fake.requests[0]!).filter((m) =>
        m.content?.startsWith('[Old tool result cleared'),
      ),
    ).toHaveLength(4);

    fake.requests.length = 0;
    fake.maxContextChars = 10;
    const { reply, status } = await agent.runTurn(conversation, 'question 5');
    expect(fake.requests).toHaveLength(3); // levels 1 to 3
    expect(status).toBe('failed');
    expect(reply).toBe(
      "Your message, with the tool calls it needed, does not fit the model's context window even with the rest of the conversation left out. Please shorten it or send the long part as a file (files are read a page at a time), or ask for less at once.",
    );
    fake.maxContextChars = undefined;
    fake.enqueue({ content: 'still usable' });
    expect((await agent.runTurn(conversation, 'question 6')).reply).toBe('still usable');
  });
});

describe('a small context window (OPENAI_CONTEXT_TOKENS=3000, OPENAI_MAX_TOKENS=4096)', () => {
  // 60,000 chars of report lines: one fact near the end, which the model can only find by reading
  // on.
  const report =
    Array.from(
      { length: 900 },
      (_, i) =>
        `Row ${i}: the regional office filed its weekly summary, nothing unusual to report.`,
    ).join('\n') + '\nThe audit reference is AUD-4471.\n';
  const windowed = () => {
    fake.contextTokens = 3_000;
    const llm = openAiClientFor(fake, 0, {
      model: 'gpt-4o-mini',
      contextTokens: 3_000,
      maxTokens: 4_096,
    });
    return testAgent({
      fake,
      store,
      llm,
      tools: [testTool('report', () => ({ content: report, isError: false }))],
    });
  };

  it('answers the first message of a fresh conversation, with a reply budget cut to the window', async () => {
    fake.enqueue({ content: 'Hello!' });
    const { reply, status } = await windowed().runTurn(conversation, 'hi');
    expect([reply, status]).toEqual(['Hello!', 'ok']);
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]!.max_tokens).toBeLessThan(3_000);
    expect(fake.requests[0]!.max_tokens).toBeGreaterThan(2_000);
  });

  it('reads a 60,000-char result page by page, every request within the window, and answers', async () => {
    expect(report.length).toBeGreaterThanOrEqual(60_000);
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user')
        return { toolCalls: [{ id: 'r', name: 'report', arguments: '{}' }] };
      const offset = nextOffset(last.content ?? '');
      if (offset !== undefined)
        return {
          toolCalls: [
            {
              id: 'p',
              name: 'get_continuation',
              arguments: JSON.stringify({ tool_call_id: markedCallId(last.content ?? ''), offset }),
            },
          ],
        };
      const seen = request.messages.map((m) => m.content ?? '').join('\n');
      return { content: /AUD-\d+/.exec(seen)?.[0] ?? 'not found' };
    };
    const { reply, status } = await windowed().runTurn(
      conversation,
      'read the report and give me the audit reference',
    );
    expect([reply, status]).toEqual(['AUD-4471', 'ok']);
    expect(fake.rejections).toEqual([]);
    // It paged through all of it: far more requests than the three a roomy window needs.
    expect(fake.requests.length).toBeGreaterThan(10);
    for (const request of fake.requests) expect(request.max_tokens).toBeGreaterThanOrEqual(256);
  });
});

describe("the caller's abort signal", () => {
  it("carries no listener per model call: a lane's signal lives across many turns", async () => {
    const look = testTool('look', () => ({ content: 'seen', isError: false }));
    fake.fallback = (request) =>
      request.messages.filter((m) => m.role === 'tool').length < 12
        ? { toolCalls: [{ id: 'l', name: 'look', arguments: '{}' }] }
        : { content: 'done' };
    const lane = new AbortController();
    const agent = testAgent({ fake, store, tools: [look] });
    expect(
      (await agent.runTurn(conversation, 'look a dozen times', { signal: lane.signal })).reply,
    ).toBe('done');
    expect(fake.requests.length).toBeGreaterThanOrEqual(13);
    expect(getEventListeners(lane.signal, 'abort')).toHaveLength(0);
  });
});

describe('hooks', () => {
  it('transformContext changes what the model sees, and pairing repair still runs after it', async () => {
    const lookup = testTool('lookup', () => ({ content: 'found', isError: false }));
    fake.enqueue(
      { toolCalls: [{ id: 'l', name: 'lookup', arguments: '{}' }] },
      { content: 'done' },
    );
    const seen: number[] = [];
    const repairs: number[] = [];
    const hooks: AgentHooks = {
      onStepFinish: (step) => repairs.push(step.repairs),
      transformContext: (messages, { turn }) => {
        seen.push(turn);
        // Drops every tool result: repair must answer the orphaned call, or the API refuses it.
        return [
          ...messages.filter((m) => m.role !== 'tool'),
          { role: 'user', content: 'Be brief.', turn },
        ];
      },
    };
    await testAgent({ fake, store, tools: [lookup], hooks }).runTurn(conversation, 'look it up');
    expect(seen).toHaveLength(2);
    expect(fake.rejections).toEqual([]);
    expect(lastMessage(fake.requests[0]!).content).toBe('Be brief.');
    expect(toolMessages(fake.requests[1]!).map((m) => JSON.parse(m.content ?? '').error)).toEqual([
      expect.stringContaining('interrupted'),
    ]);
    // The step events count what repair mended: nothing in the first request, the answered call in
    // the second.
    expect(repairs).toEqual([0, 1]);
  });

  it('beforeToolCall denies a call (the model reads why, the tool never runs) or answers it itself', async () => {
    const remove = testTool('remove', () => ({ content: 'removed', isError: false }));
    const lookup = testTool('lookup', () => ({ content: 'from the tool', isError: false }));
    const hooks: AgentHooks = {
      beforeToolCall: ({ name, args }) =>
        name === 'remove'
          ? { action: 'deny', reason: `removing ${String(args.path)} needs approval` }
          : { action: 'answer', outcome: { content: 'from the hook', isError: false } },
    };
    fake.enqueue(
      {
        toolCalls: [
          { id: 'r', name: 'remove', arguments: '{"path":"/srv"}' },
          { id: 'l', name: 'lookup', arguments: '{}' },
        ],
      },
      { content: 'ok' },
    );
    await testAgent({ fake, store, tools: [remove, lookup], hooks }).runTurn(
      conversation,
      'clean up',
    );
    expect(remove.calls).toEqual([]);
    expect(lookup.calls).toEqual([]);
    const [denied, answered] = toolMessages(fake.requests[1]!).map((m) => m.content ?? '');
    expect(JSON.parse(denied!).error).toBe(
      'The call to remove was not allowed: removing /srv needs approval',
    );
    expect(answered).toBe('from the hook');
  });

  it('logs an observer that throws and finishes the turn all the same', async () => {
    const logger = new RecordingLogger();
    fake.enqueue({ content: 'fine' });
    const hooks: AgentHooks = {
      onStepFinish: () => {
        throw new Error('metrics backend down');
      },
    };
    expect(await testAgent({ fake, store, hooks, logger }).runTurn(conversation, 'hi')).toEqual({
      status: 'ok',
      reply: 'fine',
    });
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.fields?.error)).toEqual([
      'metrics backend down',
    ]);
  });

  it('reports each step and the turn: calls, previews, pages, tokens, level', async () => {
    const dump = testTool('dump', () => ({ content: 'x'.repeat(30_000), isError: false }));
    fake.fallback = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user') return { toolCalls: [{ id: 'd', name: 'dump', arguments: '{}' }] };
      if (last.content?.startsWith('x'.repeat(100)) && last.content.length < 10_000) {
        return {
          toolCalls: [
            {
              id: 'p',
              name: 'get_continuation',
              arguments: JSON.stringify({
                tool_call_id: markedCallId(last.content),
                offset: nextOffset(last.content),
              }),
            },
          ],
        };
      }
      return { content: 'read' };
    };
    const steps: StepEvent[] = [];
    const turns: TurnEvent[] = [];
    const result = await testAgent({
      fake,
      store,
      tools: [dump],
      hooks: { onStepFinish: (e) => steps.push(e), onTurnFinish: (e) => turns.push(e) },
    }).runTurn(conversation, 'dump');
    expect(result).toEqual({
      status: 'ok',
      reply: 'read',
      previewed: [{ toolCallId: expect.stringMatching(/^call_/), toolName: 'dump' }],
    });
    expect(
      steps.map((s) => [
        s.step,
        s.finishReason,
        s.toolCalls.map((c) => c.name),
        s.previewed,
        s.derivedCalls,
        s.level,
      ]),
    ).toEqual([
      [1, 'tool_calls', ['dump'], 1, 0, 0],
      [2, 'tool_calls', ['get_continuation'], 0, 1, 0],
      [3, 'stop', [], 0, 1, 0],
    ]);
    expect(
      steps.every(
        (s) =>
          s.usage?.promptTokens !== undefined &&
          s.llmMs >= 0 &&
          s.conversation.id === conversation.id,
      ),
    ).toBe(true);
    expect(turns).toMatchObject([{ status: 'ok', steps: 3, turn: steps[0]!.turn }]);
  });
});

describe('a 1 MB user message', () => {
  it('is stored whole, reaches the model as a preview it can grep, and leaves later turns working', async () => {
    const pasted = `${'2026-11-22 INFO all quiet\n'.repeat(40_000)}2026-11-22 ERROR disk full on /dev/sdz\n${'2026-11-22 INFO all quiet\n'.repeat(1_000)}`;
    expect(pasted.length).toBeGreaterThan(1_000_000);
    fake.fallback = (request) => {
      const last = lastMessage(request);
      const marker = /get_continuation\(tool_call_id="(user_turn_\d+)"/.exec(last.content ?? '');
      if (last.role === 'user' && marker)
        return {
          toolCalls: [
            {
              id: 'g',
              name: 'get_continuation',
              arguments: JSON.stringify({ tool_call_id: marker[1], offset: 0, pattern: 'ERROR' }),
            },
          ],
        };
      if (last.role === 'tool')
        return { content: `Found it: ${/ERROR [^\n]+/.exec(last.content ?? '')![0]}` };
      return { content: `next: ${last.content}` };
    };
    const agent = testAgent({ fake, store });
    const { reply } = await agent.runTurn(conversation, pasted);
    expect(reply).toBe('Found it: ERROR disk full on /dev/sdz');
    const shown = fake.requests[0]!.messages.at(-1)!.content!;
    expect(shown.length).toBeLessThanOrEqual(20_000);
    expect(shown).toContain(
      `/${pasted.length} chars. Read on with get_continuation(tool_call_id="user_turn_`,
    );
    // Stored whole, and every later turn sends the preview, never the megabyte.
    expect(
      (await store.loadTranscript(conversation)).some(
        (m) => m.role === 'user' && m.content === pasted,
      ),
    ).toBe(true);
    expect((await agent.runTurn(conversation, 'and now?')).reply).toBe('next: and now?');
    expect(fake.requests.at(-1)!.messages.every((m) => (m.content ?? '').length <= 20_000)).toBe(
      true,
    );
    expect(fake.rejections).toEqual([]);
  });
});

describe('what reaches the user and the store', () => {
  it('returns only the final reply, never the text next to tool calls', async () => {
    fake.enqueue(
      { content: 'Let me check…', toolCalls: [{ id: 't', name: 't', arguments: '{}' }] },
      { content: 'The answer.' },
    );
    const { reply } = await testAgent({
      fake,
      store,
      tools: [testTool('t', () => ({ content: 'r', isError: false }))],
    }).runTurn(conversation, 'q');
    expect(reply).toBe('The answer.');
  });

  it('records token usage of every call', async () => {
    fake.enqueue({ toolCalls: [{ id: 't', name: 't', arguments: '{}' }] }, { content: 'done' });
    await testAgent({
      fake,
      store,
      tools: [testTool('t', () => ({ content: 'r', isError: false }))],
    }).runTurn(conversation, 'q');
    expect(await db.prisma.llmUsage.count({ where: { conversationId: conversation.id } })).toBe(2);
  });
});
