import { isJsonObject } from './arguments.ts';
import type { LlmResponse } from '../../ports/llm.ts';
import type { ToolCall } from '../../ports/conversation.ts';
import type { ToolFlags, ToolSpec } from '../../ports/tools.ts';

/** 37 characters: OpenAI rejects tool call ids longer than 40. */
export const newToolCallId = () => `call_${crypto.randomUUID().replaceAll('-', '')}`;

/** A tool's flags, or none for a tool the model made up. */
export const flagsOf = (tools: readonly ToolSpec[], name: string): ToolFlags =>
  tools.find((t) => t.name === name)?.flags ?? {};

/**
 * Tool calls worth running. A reply cut off at max_tokens may end inside a call's arguments: only
 * calls whose JSON is complete are trusted then. Every call gets an id of Spool's own: servers
 * reuse ids ("call_0") or send none, and two replicas must never write the same one. A call of
 * a derived tool says so, so that the transcript alone tells what to leave out later.
 */
export function acceptedCalls(response: LlmResponse, tools: readonly ToolSpec[]): ToolCall[] {
  const calls =
    response.finishReason === 'length'
      ? response.toolCalls.filter((c) => isJsonObject(c.arguments))
      : response.toolCalls;
  return calls.map(({ id, ...call }) => ({
    ...call,
    id: newToolCallId(),
    ...(id ? { modelId: id } : {}),
    ...(flagsOf(tools, call.name).derived ? { derived: true } : {}),
  }));
}
