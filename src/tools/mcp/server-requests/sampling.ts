import {
  ProtocolError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  type SamplingMessageContentBlock,
} from '@modelcontextprotocol/client';
import type {
  SamplingAnswer,
  SamplingMessage,
  SamplingRequest,
} from '../../../core/ports/tools.ts';
import type { SamplingLimits } from './sampling-limits.ts';

type Params = CreateMessageRequest['params'];

const blocksOf = (content: SamplingMessageContentBlock | SamplingMessageContentBlock[]) =>
  Array.isArray(content) ? content : [content];

/** What the model reads of a block: text as it is; what it cannot read named. */
const textOf = (block: SamplingMessageContentBlock): string => {
  if (block.type === 'text') return block.text;
  if (block.type === 'tool_result')
    return block.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  return block.type === 'tool_use' ? '' : `[${block.type}]`;
};

/** One MCP sampling message as the conversation's messages: results stand on their own. */
function messagesOf({ role, content }: Params['messages'][number]): SamplingMessage[] {
  const blocks = blocksOf(content);
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (results.length > 0)
    return results.map((r) => ({ role: 'tool', toolCallId: r.toolUseId, text: textOf(r) }));
  const text = blocks.map(textOf).filter(Boolean).join('\n');
  if (role === 'user') return [{ role: 'user', text }];
  const toolCalls = blocks.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input) }] : [],
  );
  return [{ role: 'assistant', text, ...(toolCalls.length ? { toolCalls } : {}) }];
}

/** A server's sampling request as Spool asks its model, its budget cut to the server's limit. */
export function samplingRequestOf(params: Params, limits: SamplingLimits): SamplingRequest {
  const tools = 'tools' in params && params.tools ? params.tools : [];
  const choice = 'toolChoice' in params ? params.toolChoice?.mode : undefined;
  return {
    ...(params.systemPrompt ? { system: params.systemPrompt } : {}),
    messages: params.messages.flatMap(messagesOf),
    maxTokens: Math.min(params.maxTokens, limits.maxTokens),
    ...(tools.length
      ? {
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description ?? t.name,
            parameters: { ...t.inputSchema, type: 'object' as const },
          })),
          toolChoice: choice === 'none' ? ('none' as const) : ('auto' as const),
        }
      : {}),
  };
}

/** The model's answer as MCP's result: its calls as tool_use blocks, for the server to run. */
export function createMessageResult(
  answer: Exclude<SamplingAnswer, { refusal: string }>,
): CreateMessageResult | CreateMessageResultWithTools {
  const { text, toolCalls, model, stopReason } = answer;
  if (toolCalls.length === 0)
    return { role: 'assistant', content: { type: 'text', text }, model, stopReason };
  return {
    role: 'assistant',
    content: [
      ...(text ? [{ type: 'text' as const, text }] : []),
      ...toolCalls.map((call) => ({
        type: 'tool_use' as const,
        id: call.id,
        name: call.name,
        input: parsedInput(call.arguments),
      })),
    ],
    model,
    stopReason,
  };
}

function parsedInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { text };
  }
}

/** A call under way, as sampling sees it: who asks its model, how often it has, its clock. */
export interface SamplingCall {
  askModel?: (request: SamplingRequest) => Promise<SamplingAnswer>;
  sampled: number;
  clock: { pause(): () => void };
}

/** MCP's code for a sampling request the client turned down (the specification's example). */
const DECLINED = -1;

/**
 * A server's sampling request, answered for the one call of it under way: MCP does not say which
 * call a request belongs to, so with several under way it is declined, as a question is (a
 * person's model and caps must never pay for someone else's call). Over the server's limit, or
 * the turn's caps, it is declined too, with why. The call's clock waits while the model answers.
 */
export async function answerSampling(
  params: Params,
  running: Iterable<SamplingCall>,
  limits: SamplingLimits,
): Promise<CreateMessageResult | CreateMessageResultWithTools> {
  const [call, ...others] = running;
  const reason =
    !call?.askModel || others.length > 0
      ? 'no single call of this server is under way to ask for'
      : call.sampled >= limits.perCall
        ? `this call has asked the model ${limits.perCall} times, its limit`
        : undefined;
  if (reason || !call?.askModel) throw new ProtocolError(DECLINED, `Spool declined: ${reason}`);
  call.sampled += 1;
  const resume = call.clock.pause();
  try {
    const answer = await call.askModel(samplingRequestOf(params, limits));
    if ('refusal' in answer) throw new ProtocolError(DECLINED, `Spool declined: ${answer.refusal}`);
    return createMessageResult(answer);
  } finally {
    resume();
  }
}
