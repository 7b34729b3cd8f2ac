import { describe, expect, it } from 'vitest';
import { RecordingLogger } from '../../../test/support/logger.ts';
import type { LlmResponse } from '../ports/llm.ts';
import type { TurnSpend } from '../ports/turns.ts';
import { settleUsage } from './request-spend.ts';

const answer = (usage?: LlmResponse['usage']): LlmResponse => ({
  content: 'hi',
  toolCalls: [],
  finishReason: 'stop',
  ...(usage ? { usage } : {}),
});

function spend(): TurnSpend & { released: string[] } {
  const released: string[] = [];
  return {
    released,
    user: 'U1',
    price: () => undefined,
    release: async (holdId) => {
      released.push(holdId);
    },
  };
}

describe('settleUsage', () => {
  it('releases the hold of a request whose response carried no usage, there being no write to', async () => {
    const gate = spend();
    await settleUsage(answer(), 'h1', gate, new RecordingLogger());
    expect(gate.released).toEqual(['h1']);
  });

  it('leaves a hold to the write that stores the usage', async () => {
    const gate = spend();
    const usage = { model: 'm', promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    await settleUsage(answer(usage), 'h1', gate, new RecordingLogger());
    expect(gate.released).toEqual([]);
  });

  it('names each count the client adjusted in one warning, and carries on when a release fails', async () => {
    const logger = new RecordingLogger();
    await settleUsage(
      answer({
        model: 'm',
        promptTokens: 0,
        completionTokens: 5,
        totalTokens: 5,
        responseId: 'chatcmpl-9',
        adjusted: [
          { field: 'prompt_tokens', fix: 'dropped', reported: 'null' },
          { field: 'cached_tokens', fix: 'clamped', reported: '40' },
        ],
      }),
      undefined,
      undefined,
      logger,
    );
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        message:
          '[usage] The model server reported usage Spool cannot keep as it is: prompt_tokens null (dropped), cached_tokens 40 (clamped)',
        fields: { model: 'm', response: 'chatcmpl-9' },
      },
    ]);
    const failing = { ...spend(), release: () => Promise.reject(new Error('down')) };
    await expect(settleUsage(answer(), 'h2', failing, logger)).resolves.toBeUndefined();
  });
});
