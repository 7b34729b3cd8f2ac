import type { Message, ToolCall } from '../core/ports/conversation.ts';
import type { LlmResponse } from '../core/ports/llm.ts';

/**
 * Messages in the shape the gen_ai semantic conventions give `gen_ai.input.messages` and
 * `gen_ai.output.messages`: a role and typed parts. Built only when content is captured.
 */
type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string };

interface ChatMessage {
  role: 'user' | 'assistant' | 'tool';
  parts: Part[];
  finish_reason?: string;
}

export function textMessage(role: ChatMessage['role'], text: string): ChatMessage {
  return { role, parts: [{ type: 'text', content: text }] };
}

function assistantParts(content: string, calls: readonly ToolCall[]): Part[] {
  return [
    ...(content ? [{ type: 'text' as const, content }] : []),
    ...calls.map(({ id, name, arguments: args }) => ({
      type: 'tool_call' as const,
      id,
      name,
      arguments: args,
    })),
  ];
}

/** A request's transcript. */
export function chatInput(messages: readonly Message[]): ChatMessage[] {
  return messages.map((m) => {
    if (m.role === 'tool')
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: m.toolCallId, response: m.content }],
      };
    if (m.role === 'assistant')
      return { role: 'assistant', parts: assistantParts(m.content, m.toolCalls ?? []) };
    return textMessage('user', m.content);
  });
}

/** A response: the model's text and the calls it made, with why it stopped. */
export function chatOutput(response: LlmResponse): ChatMessage[] {
  return [
    {
      role: 'assistant',
      parts: assistantParts(response.content, response.toolCalls),
      finish_reason: response.finishReason,
    },
  ];
}
