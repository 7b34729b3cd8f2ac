/**
 * MCP sampling: a tool's server asks the turn's model. The request is the server's own (its system
 * prompt, messages and tools, none of the conversation's), sent with the turn's model, admitted
 * against the turn's caps and stored as the turn's person's usage, as the turn's own requests are.
 */
import { admit, settleUsage, usageRecord } from '../request-spend.ts';
import type { Turn } from '../turn.ts';
import type { Logger } from '../../logger.ts';
import type { Message } from '../../ports/conversation.ts';
import type { LlmPort, LlmRequest, LlmResponse } from '../../ports/llm.ts';
import type { StorePort } from '../../ports/store.ts';
import type { SamplingAnswer, SamplingMessage, SamplingRequest } from '../../ports/tools.ts';

const asMessage = (message: SamplingMessage, turn: number): Message => {
  if (message.role === 'tool')
    return { role: 'tool', toolCallId: message.toolCallId, content: message.text, turn };
  if (message.role === 'user') return { role: 'user', content: message.text, turn };
  return { role: 'assistant', content: message.text, turn, toolCalls: message.toolCalls };
};

function stopReason(response: LlmResponse): 'endTurn' | 'maxTokens' | 'toolUse' {
  if (response.toolCalls.length > 0) return 'toolUse';
  return response.finishReason === 'length' ? 'maxTokens' : 'endTurn';
}

/** The request the model is sent for a server's sampling request in `turn`. */
export function samplingLlmRequest(request: SamplingRequest, turn: Turn): LlmRequest {
  const tools = request.tools ?? [];
  return {
    system: request.system ?? '',
    messages: request.messages.map((m) => asMessage(m, turn.number)),
    tools,
    toolChoice: tools.length > 0 ? (request.toolChoice ?? 'auto') : 'none',
    maxTokens: request.maxTokens,
    ...(turn.model ? { model: turn.model } : {}),
  };
}

/** How the calls of `turn` ask its model. */
export function turnSampler(
  deps: { llm: LlmPort; store: StorePort; logger: Logger },
  turn: Turn,
): (request: SamplingRequest) => Promise<SamplingAnswer> {
  return async (request) => {
    const llmRequest = samplingLlmRequest(request, turn);
    const admitted = await admit(turn.spend, llmRequest, deps.llm);
    if (admitted && 'refusal' in admitted) return admitted;
    const response = await deps.llm.complete(llmRequest, turn.signal).catch((error: unknown) => {
      if (admitted) void turn.spend?.release?.(admitted.holdId).catch(() => {});
      throw error;
    });
    await settleUsage(response, admitted?.holdId, turn.spend, deps.logger);
    const usage = usageRecord(turn.spend, response, admitted?.holdId);
    // Counted as the turn's person's, under the turn's lease, with no message of its own.
    if (usage) await deps.store.appendMessages(turn.conversation, [], { usage, fence: turn.fence });
    return {
      text: response.content,
      toolCalls: response.toolCalls.map(({ id, name, arguments: args }) => ({
        id,
        name,
        arguments: args,
      })),
      model: usage?.model ?? turn.model ?? 'unknown',
      stopReason: stopReason(response),
    };
  };
}
