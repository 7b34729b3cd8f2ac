import { describe, expect, it } from 'vitest';
import { Agent } from '../agent.ts';
import type { RedoneEvent } from '../hooks.ts';
import type { LlmPort } from '../../ports/llm.ts';
import { builtinSource, ToolRegistry } from '../../../tools/registry.ts';
import { defaultAgentOptions } from '../../../../test/support/agent.ts';
import { silentLogger } from '../../../../test/support/logger.ts';
import { MemoryStore } from '../../../../test/support/memory-store.ts';

const llm: LlmPort = {
  async complete() {
    return { content: 'done', toolCalls: [], finishReason: 'stop' };
  },
};
const key = { platform: 'test', workspace: 'w', channel: 'c', thread: 't' };

function agentOver(store: MemoryStore, redone: RedoneEvent[]) {
  return new Agent(
    {
      llm,
      tools: new ToolRegistry([builtinSource([])]),
      store,
      logger: silentLogger,
      hooks: { onRedone: (event) => redone.push(event) },
    },
    defaultAgentOptions,
  );
}

describe('a resumed turn', () => {
  it('reports the model request it asks again, with why its attempt ended', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    // An earlier attempt stored the message, and was cut short at the model.
    await store.appendMessages(conversation, [
      { role: 'user', content: 'hi', turn: 1, inboxId: '7' },
    ]);
    const redone: RedoneEvent[] = [];
    const fence = { laneId: '1', generation: '2' };
    const result = await agentOver(store, redone).runTurn(conversation, 'hi', {
      inboxId: '7',
      resumedAfter: 'crash',
      fence,
    });
    expect(result).toMatchObject({ status: 'ok', reply: 'done' });
    expect(redone).toEqual([
      { conversation, turn: 1, reason: 'crash', modelRequests: 1, toolCalls: 0 },
    ]);
    // The step it wrote carries the lease it ran under.
    expect(store.steps.at(-1)!.records.fence).toEqual(fence);
  });

  it('reports the model request of an attempt a crash cut short before it stored anything', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    const redone: RedoneEvent[] = [];
    await agentOver(store, redone).runTurn(conversation, 'hi', {
      inboxId: '9',
      resumedAfter: 'crash',
    });
    expect(redone).toEqual([
      { conversation, turn: 1, reason: 'crash', modelRequests: 1, toolCalls: 0 },
    ]);
  });

  it('reports nothing for a first attempt', async () => {
    const store = new MemoryStore();
    const conversation = await store.openConversation(key);
    const redone: RedoneEvent[] = [];
    await agentOver(store, redone).runTurn(conversation, 'hi', {
      inboxId: '8',
      resumedAfter: 'shutdown',
    });
    expect(redone).toEqual([]);
  });
});
