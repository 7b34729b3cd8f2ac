import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { LlmPort, LlmRequest } from '../core/ports/llm.ts';
import { tracedLlm } from './spans.ts';

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
