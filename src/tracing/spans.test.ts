import { trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import type { LlmPort, LlmRequest } from '../core/ports/llm.ts';
import type { ToolContext, ToolPort } from '../core/ports/tools.ts';
import { tracedLlm, tracedTools } from './spans.ts';

/** A client with state of its own, as OpenAiChatClient has. */
class Client implements LlmPort {
  private readonly window = 1_000;
  complete = async () => ({ content: 'ok', toolCalls: [], finishReason: 'stop' as const });
  async fits(): Promise<boolean> {
    return this.window > 0;
  }
  async room(): Promise<number> {
    return this.window - 10;
  }
}

const request: LlmRequest = { system: '', messages: [], tools: [], toolChoice: 'auto' };

describe('tracedLlm', () => {
  it('leaves what it does not trace to the client, called on the client', async () => {
    const traced = tracedLlm(
      trace.getTracer('test'),
      new Client(),
      { model: 'm' },
      { captureContent: false, mask: (t) => t },
    );
    expect(await traced.fits!(request)).toBe(true);
    expect(await traced.room!(request)).toBe(990);
    expect(traced.mostTokens).toBeUndefined();
    expect((await traced.complete(request)).content).toBe('ok');
  });
});

describe('tracedTools', () => {
  it("names the call it traces: gen_ai.tool.call.id is the call's id", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tools: ToolPort = {
      list: () => [],
      call: async () => ({ content: 'found', isError: false }),
    };
    const traced = tracedTools(provider.getTracer('test'), tools, {
      captureContent: false,
      mask: (t) => t,
    });
    const context: ToolContext = {
      conversation: {
        id: 'c1',
        platform: 'console',
        workspace: 'w',
        channel: 'local',
        thread: 't',
      },
      turn: 1,
      signal: new AbortController().signal,
      reading: { transcript: [], viewChars: 1_000 },
      callId: 'call_0123456789abcdef0123456789abcdef',
    };
    expect(await traced.call('fs__read', {}, context)).toEqual({
      content: 'found',
      isError: false,
    });
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('execute_tool fs__read');
    expect(span?.attributes).toMatchObject({
      'gen_ai.tool.name': 'fs__read',
      'gen_ai.tool.call.id': 'call_0123456789abcdef0123456789abcdef',
    });
  });
});
