import { describe, expect, it } from 'vitest';
import { Agent } from './agent.ts';
import type { StepEvent } from './hooks.ts';
import { getContinuationTool } from '../builtins/get-continuation.ts';
import { TURN_REPLIES } from './turn-replies.ts';
import {
  ContextLengthError,
  type LlmPort,
  type LlmRequest,
  type LlmResponse,
} from '../ports/llm.ts';
import { StoreError } from '../ports/store.ts';
import type { TurnActivity } from '../ports/turns.ts';
import { errorResult, type ToolFlags } from '../ports/tools.ts';
import { interruptedCallMarker } from '../markers.ts';
import { builtinSource, ToolRegistry } from '../../tools/registry.ts';
import { defaultAgentOptions, testTool } from '../../../test/support/agent.ts';
import { silentLogger } from '../../../test/support/logger.ts';
import { MemoryStore } from '../../../test/support/memory-store.ts';

/** A model that answers from a script, one reply a request, and keeps what it was asked. */
function scriptedModel(
  ...replies: Array<Partial<LlmResponse> | ((request: LlmRequest) => Partial<LlmResponse> | Error)>
) {
  const requests: LlmRequest[] = [];
  const llm: LlmPort = {
    async complete(request) {
      requests.push(request);
      const next = replies.length > 1 ? replies.shift()! : replies[0]!;
      const reply = typeof next === 'function' ? next(request) : next;
      if (reply instanceof Error) throw reply;
      return {
        content: '',
        toolCalls: [],
        finishReason: 'stop',
        usage: { model: 'm', promptTokens: 10, completionTokens: 1, totalTokens: 11 },
        ...reply,
      };
    },
  };
  return { llm, requests };
}

const call = (name: string, args: unknown = {}) => ({
  toolCalls: [{ id: 'model-id', name, arguments: JSON.stringify(args) }],
  finishReason: 'tool_calls' as const,
});

function agentWith(
  llm: LlmPort,
  store: MemoryStore,
  tools: ReturnType<typeof testTool>[] = [],
  steps: StepEvent[] = [],
) {
  const registry = new ToolRegistry([
    builtinSource([...tools, getContinuationTool(store, { chunkChars: 1_000, maxPages: 2 })]),
  ]);
  return new Agent(
    {
      llm,
      tools: registry,
      store,
      logger: silentLogger,
      hooks: { onStepFinish: (e) => steps.push(e) },
    },
    defaultAgentOptions,
  );
}

const key = { platform: 'test', workspace: 'w', channel: 'c', thread: 't' };

describe('Agent over an in-memory store', () => {
  it('stores each call before it runs, and its result with it after', async () => {
    const store = new MemoryStore();
    const seen: number[] = [];
    const tool = testTool('look', async () => {
      seen.push(store.steps.length);
      return { content: 'found it', isError: false };
    });
    const { llm } = scriptedModel(call('look'), { content: 'done' });
    const conversation = await store.openConversation(key);
    expect(await agentWith(llm, store, [tool]).runTurn(conversation, 'look')).toEqual({
      reply: 'done',
      status: 'ok',
    });
    // The person's message with the call (and the usage of the step that made it), its result,
    // the answer.
    expect(store.steps.map((s) => s.messages.map((m) => m.role))).toEqual([
      ['user', 'assistant'],
      ['tool'],
      ['assistant'],
    ]);
    expect(seen).toEqual([1]);
    expect(store.steps[0]!.records.usage?.promptTokens).toBe(10);
    expect(store.steps[1]!.records.results).toMatchObject([
      { content: 'found it', isError: false },
    ]);
  });

  it("tells the tool the id of the call it runs: the stored call's, Spool's own", async () => {
    const store = new MemoryStore();
    const ids: Array<string | undefined> = [];
    const tool = testTool('look', (_, context) => {
      ids.push(context.callId);
      return { content: 'found it', isError: false };
    });
    const { llm } = scriptedModel(call('look'), { content: 'done' });
    await agentWith(llm, store, [tool]).runTurn(await store.openConversation(key), 'look');
    const stored = store.steps[0]!.messages[1]!;
    expect(stored.role === 'assistant' && stored.toolCalls?.map((c) => c.id)).toEqual(ids);
    expect(ids).toEqual([expect.stringMatching(/^call_[0-9a-f]{32}$/)]);
  });

  it('goes on from the stored transcript when the turn was cut short, without running a stored call again', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    const tool = testTool('deploy', () => ({ content: 'deployed', isError: false }));
    const first = scriptedModel(call('deploy'), () => new Error('the process died'));
    await agentWith(first.llm, store, [tool]).runTurn(conversation, 'deploy it', { inboxId: '7' });
    expect(tool.calls).toHaveLength(1);
    const second = scriptedModel({ content: 'it is deployed' });
    expect(
      (
        await agentWith(second.llm, store, [tool]).runTurn(conversation, 'deploy it', {
          inboxId: '7',
        })
      ).reply,
    ).toBe('it is deployed');
    expect(tool.calls).toHaveLength(1);
    expect(second.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(
      (await store.loadTranscript(conversation)).filter((m) => m.role === 'user'),
    ).toHaveLength(1);
  });

  it('rethrows a store failure for the pipeline to retry, instead of answering it', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    store.failWrites = true;
    await expect(
      agentWith(scriptedModel({ content: 'hi' }).llm, store).runTurn(conversation, 'hello'),
    ).rejects.toBeInstanceOf(StoreError);
  });

  it("stores the person's message with the turn's first step, or with its end where no step stored it", async () => {
    const roles = (store: MemoryStore) => store.steps.map((s) => s.messages.map((m) => m.role));
    // Answered at once: the message and the answer, one write.
    const answered = new MemoryStore();
    const { llm } = scriptedModel({ content: 'hi' });
    await agentWith(llm, answered).runTurn(await answered.openConversation(key), 'hello', {
      inboxId: '7',
    });
    expect(roles(answered)).toEqual([['user', 'assistant']]);
    expect(answered.steps[0]!.messages[0]).toMatchObject({ content: 'hello', inboxId: '7' });

    // Its first request failed, or was stopped: the message is kept all the same.
    const failed = new MemoryStore();
    const down = scriptedModel(() => new Error('model down')).llm;
    expect(
      await agentWith(down, failed).runTurn(await failed.openConversation(key), 'anyone?'),
    ).toMatchObject({ status: 'failed' });
    expect(roles(failed)).toEqual([['user']]);
    const stopped = new MemoryStore();
    const stop = new AbortController();
    const stopping = scriptedModel(() => {
      stop.abort(new Error('stopped'));
      return new Error('aborted');
    }).llm;
    await agentWith(stopping, stopped).runTurn(await stopped.openConversation(key), 'wait', {
      signal: stop.signal,
    });
    expect(roles(stopped)).toEqual([['user']]);

    // The store failed: nothing more is written; the turn is tried again, its message with it.
    const failing = new MemoryStore();
    const conversation = await failing.openConversation(key);
    const append = failing.appendMessages.bind(failing);
    let writes = 0;
    failing.appendMessages = (...args) => (writes++, append(...args));
    failing.failWrites = true;
    await expect(
      agentWith(scriptedModel({ content: 'hi' }).llm, failing).runTurn(conversation, 'hello'),
    ).rejects.toBeInstanceOf(StoreError);
    expect(writes).toBe(1);
  });

  it('answers a made-up tool and a failing one with error results the model reads', async () => {
    const store = new MemoryStore();
    const broken = testTool('broken', () => Promise.reject(new Error('disk on fire')));
    const { llm, requests } = scriptedModel(call('invented'), call('broken'), { content: 'sorry' });
    await agentWith(llm, store, [broken]).runTurn(await store.openConversation(key), 'try');
    const results = requests.slice(1).map((r) => JSON.parse(r.messages.at(-1)!.content).error);
    expect(results).toEqual([
      'Unknown tool "invented". Available tools: broken, get_continuation',
      'Tool broken failed: disk on fire',
    ]);
  });

  it('refuses calls past a tool’s own limit, then asks for an answer, reading the limit from its flags', async () => {
    const store = new MemoryStore();
    const dump = testTool('dump', () => ({ content: 'x'.repeat(30_000), isError: false }));
    const { llm, requests } = scriptedModel((r) => {
      const dumped = r.messages.find((m) => m.role === 'tool');
      if (r.toolChoice === 'none') return { content: 'answered' };
      return dumped?.role === 'tool'
        ? call('get_continuation', { tool_call_id: dumped.toolCallId, offset: 0 })
        : call('dump');
    });
    const steps: StepEvent[] = [];
    await agentWith(llm, store, [dump], steps).runTurn(
      await store.openConversation(key),
      'read it all',
    );
    expect(requests.map((r) => r.toolChoice)).toEqual(['auto', 'auto', 'auto', 'auto', 'none']);
    expect(requests[4]!.messages.at(-1)!.content).toMatch(
      /get_continuation may be called 2 times in one turn/,
    );
    expect(steps.map((s) => [s.action, s.derivedCalls])).toEqual([
      ['run_calls', 0],
      ['run_calls', 1],
      ['run_calls', 2],
      ['run_calls', 3],
      ['answer', 3],
    ]);
  });

  it('says which part of a stored result get_continuation reads, once it knows', async () => {
    const store = new MemoryStore();
    const dump = testTool('dump', () => ({ content: 'x'.repeat(3_500), isError: false }));
    const { llm } = scriptedModel(
      call('dump'),
      (r) => {
        const dumped = r.messages.find((m) => m.role === 'tool');
        return call('get_continuation', {
          tool_call_id: dumped?.role === 'tool' ? dumped.toolCallId : '',
          offset: 1_000,
        });
      },
      { content: 'read' },
    );
    const activity: TurnActivity[] = [];
    await agentWith(llm, store, [dump]).runTurn(await store.openConversation(key), 'read it', {
      onActivity: (a) => activity.push(a),
    });
    // The page size is the tool's (1,000 characters here).
    expect(activity.filter((a) => a.kind === 'reading')).toEqual([
      { kind: 'reading', name: 'get_continuation', read: { from: 1_000, to: 2_000, of: 3_500 } },
    ]);
  });

  it('compacts a request that does not fit until none is left to try, then tells the user', async () => {
    const store = new MemoryStore();
    const { llm, requests } = scriptedModel(() => new ContextLengthError('too long'));
    const result = await agentWith(llm, store).runTurn(await store.openConversation(key), 'hello');
    expect(result).toEqual({ reply: TURN_REPLIES.tooLong, status: 'failed' });
    // Levels 0 to 3; with nothing read this turn, narrowing the view would change nothing.
    expect(requests).toHaveLength(4);
  });

  it('offers a tool a server adds during the turn from the next request on', async () => {
    const store = new MemoryStore();
    const tools: ReturnType<typeof testTool>[] = [];
    const added = testTool('added', () => ({ content: 'added ran', isError: false }));
    const install = testTool('install', () => {
      tools.push(added);
      return { content: 'installed', isError: false };
    });
    tools.push(install);
    const { llm, requests } = scriptedModel(call('install'), call('added'), { content: 'done' });
    const agent = new Agent(
      {
        llm,
        tools: new ToolRegistry([{ tools: () => tools, close: async () => {} }]),
        store,
        logger: silentLogger,
      },
      defaultAgentOptions,
    );
    expect(await agent.runTurn(await store.openConversation(key), 'go')).toEqual({
      reply: 'done',
      status: 'ok',
    });
    expect(requests.map((r) => r.tools.map((t) => t.name))).toEqual([
      ['install'],
      ['install', 'added'],
      ['install', 'added'],
    ]);
    expect(added.calls).toHaveLength(1);
  });

  it("sends a tool result's image to the model in the turn, beside the result's description", async () => {
    const store = new MemoryStore();
    const base64 = Buffer.from('png bytes').toString('base64');
    const screenshot = testTool('screenshot', () => ({
      content: '[image: image/png, 9 bytes, stored, not shown]',
      isError: false,
      binaries: [{ kind: 'image', mimeType: 'image/png', sizeBytes: 9, base64 }],
    }));
    const { llm, requests } = scriptedModel(call('screenshot'), { content: 'a cat' });
    const agent = agentWith(llm, store, [screenshot]);
    expect(await agent.runTurn(await store.openConversation(key), 'what is on screen?')).toEqual({
      reply: 'a cat',
      status: 'ok',
    });
    const [result] = requests[1]!.messages.flatMap((m) => (m.role === 'tool' ? [m] : []));
    expect(requests[1]!.images?.get(result!.toolCallId)).toEqual([
      { mimeType: 'image/png', base64 },
    ]);
    expect(requests[0]!.images).toBeUndefined();
  });
});

/** A test tool with flags, such as an MCP server's annotations give. */
const flagged = <T extends ReturnType<typeof testTool>>(tool: T, flags: ToolFlags): T => ({
  ...tool,
  spec: { ...tool.spec, flags },
});

describe('calls whose outcome is unknown', () => {
  it('resumes a turn cut short mid-call: the read-only call is sent again, the other answered as interrupted, before the model is asked', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    const create = testTool('create_ticket', () => ({ content: 'T-2 created', isError: false }));
    const lookup = flagged(
      testTool('lookup_ticket', () => ({ content: 'T-1 open', isError: false })),
      { readOnly: true },
    );
    // A crash came after both calls were stored (and sent), before any result was.
    await store.appendMessages(conversation, [
      { role: 'user', content: 'file it', turn: 1, inboxId: '7' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_a', name: 'create_ticket', arguments: '{"title":"x"}' },
          { id: 'call_b', name: 'lookup_ticket', arguments: '{"id":"T-1"}' },
        ],
        turn: 1,
      },
    ]);
    const { llm, requests } = scriptedModel({ content: 'not sure it was filed' });
    const result = await agentWith(llm, store, [create, lookup]).runTurn(conversation, 'file it', {
      inboxId: '7',
    });
    expect(result).toEqual({ reply: 'not sure it was filed', status: 'ok' });
    expect(create.calls).toEqual([]);
    expect(lookup.calls).toEqual([{ id: 'T-1' }]);
    expect(requests).toHaveLength(1);
    expect(
      requests[0]!.messages.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m.content]] : [])),
    ).toEqual([
      ['call_a', errorResult(interruptedCallMarker('create_ticket')).content],
      ['call_b', 'T-1 open'],
    ]);
  });

  it("stores a call the turn's signal cut short as interrupted unless its tool may be called again", async () => {
    for (const [flags, expected] of [
      [{}, interruptedCallMarker('create_ticket')],
      [{ idempotent: true }, 'create_ticket was stopped before it finished.'],
    ] as const) {
      const store = new MemoryStore();
      const stop = new AbortController();
      const create = flagged(
        testTool('create_ticket', () => {
          stop.abort(new Error('shutting down'));
          return {
            ...errorResult('create_ticket was stopped before it finished.'),
            cutShort: true,
          };
        }),
        flags,
      );
      const { llm } = scriptedModel(call('create_ticket'), { content: 'ok' });
      await agentWith(llm, store, [create]).runTurn(await store.openConversation(key), 'file it', {
        signal: stop.signal,
      });
      const stored = store.steps.flatMap((s) => s.records.results ?? []);
      expect(stored.map((r) => JSON.parse(r.content).error)).toEqual([expected]);
    }
  });
});
