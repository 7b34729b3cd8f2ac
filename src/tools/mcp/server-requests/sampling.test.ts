import { ProtocolError, type CreateMessageRequest } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { SamplingAnswer, SamplingRequest } from '../../../core/ports/tools.ts';
import { answerSampling, samplingRequestOf, type SamplingCall } from './sampling.ts';

const limits = { maxTokens: 100, perCall: 2 };
const params: CreateMessageRequest['params'] = {
  messages: [{ role: 'user', content: { type: 'text', text: 'weather in Paris?' } }],
  maxTokens: 5000,
  tools: [{ name: 'forecast', inputSchema: { type: 'object', properties: {} } }],
};
const answer: SamplingAnswer = {
  text: '',
  toolCalls: [{ id: 'c1', name: 'forecast', arguments: '{"city":"Paris"}' }],
  model: 'm',
  stopReason: 'toolUse',
};

function call(
  reply: SamplingAnswer = answer,
): SamplingCall & { asked: SamplingRequest[]; paused: number } {
  const asked: SamplingRequest[] = [];
  const state = { paused: 0 };
  return {
    asked,
    get paused() {
      return state.paused;
    },
    sampled: 0,
    askModel: async (request) => (asked.push(request), reply),
    clock: { pause: () => (state.paused++, () => state.paused--) },
  };
}

describe('answerSampling', () => {
  it("asks the one call's model with the server's tools, within the server's limit, clock paused meanwhile", async () => {
    const running = call();
    const result = await answerSampling(params, [running], limits);
    expect(result).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'forecast', input: { city: 'Paris' } }],
      model: 'm',
      stopReason: 'toolUse',
    });
    expect(running.asked[0]).toMatchObject({ maxTokens: 100, toolChoice: 'auto' });
    expect(running.asked[0]!.tools!.map((t) => t.name)).toEqual(['forecast']);
    expect(running.paused).toBe(0);
  });

  it('declines with why: several calls under way, the per-call limit, the caps', async () => {
    const declined = (p: Promise<unknown>) =>
      p.then(
        () => 'answered',
        (e: unknown) => (e instanceof ProtocolError ? e.message : String(e)),
      );
    expect(await declined(answerSampling(params, [call(), call()], limits))).toMatch(
      /no single call of this server is under way/,
    );
    expect(await declined(answerSampling(params, [], limits))).toMatch(/no single call/);
    const once = call();
    await answerSampling(params, [once], limits);
    await answerSampling(params, [once], limits);
    expect(await declined(answerSampling(params, [once], limits))).toMatch(
      /asked the model 2 times/,
    );
    expect(
      await declined(
        answerSampling(params, [call({ refusal: 'the daily cap is reached' })], limits),
      ),
    ).toMatch(/declined: the daily cap is reached/);
  });

  it('carries tool results back as tool messages', () => {
    const request = samplingRequestOf(
      {
        ...params,
        messages: [
          ...params.messages,
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'c1', name: 'forecast', input: {} }],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', toolUseId: 'c1', content: [{ type: 'text', text: 'sunny' }] },
            ],
          },
        ],
      },
      limits,
    );
    expect(request.messages).toEqual([
      { role: 'user', text: 'weather in Paris?' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'forecast', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', text: 'sunny' },
    ]);
  });
});
