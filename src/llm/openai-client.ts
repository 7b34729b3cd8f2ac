import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import {
  ContextLengthError,
  LlmRequestError,
  type FinishReason,
  type LlmPort,
  type LlmRequest,
  type LlmResponse,
  type Message,
} from '../core/types.ts';

export interface OpenAiClientOptions {
  apiKey: string;
  baseURL?: string;
  model: string;
  maxTokens: number;
  /** The SDK retries 429, 408, 409 and 5xx with exponential backoff this many times. */
  maxRetries: number;
  timeoutMs: number;
}

// OpenAI says code context_length_exceeded; vLLM, Ollama, LM Studio and llama.cpp say it in words.
const CONTEXT_LENGTH = /context[_ ]length|maximum context|context window|too many tokens|prompt is too long/i;

function toOpenAi(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      };
  }
}

function finishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    default:
      return 'other';
  }
}

/** The body of one Chat Completions request, exactly as `complete` sends it. */
export function chatRequestBody(options: Pick<OpenAiClientOptions, 'model' | 'maxTokens'>, request: LlmRequest): ChatCompletionCreateParamsNonStreaming {
  const tools: ChatCompletionTool[] = request.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    messages: [{ role: 'system', content: request.system }, ...request.messages.map(toOpenAi)],
    ...(tools.length > 0 ? { tools, tool_choice: request.toolChoice } : {}),
  };
}

/** The core's LLM port over any OpenAI-compatible Chat Completions endpoint. */
export class OpenAiChatClient implements LlmPort {
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiClientOptions) {
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: options.maxRetries,
      timeout: options.timeoutMs,
    });
  }

  async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create(chatRequestBody(this.options, request), { signal });
    } catch (error) {
      throw translateError(error);
    }
    const choice = completion.choices[0];
    if (!choice) throw new LlmRequestError('The model returned no choices.');
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((c) =>
      c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' }] : [],
    );
    return {
      content: choice.message.content ?? '',
      toolCalls,
      finishReason: finishReason(choice.finish_reason),
      usage: completion.usage && {
        model: completion.model || this.options.model,
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
        totalTokens: completion.usage.total_tokens,
      },
    };
  }
}

function translateError(error: unknown): Error {
  if (error instanceof OpenAI.APIError) {
    const code = typeof error.code === 'string' ? error.code : '';
    if (code === 'context_length_exceeded' || ((error.status === 400 || error.status === 413) && CONTEXT_LENGTH.test(error.message))) {
      return new ContextLengthError(error.message);
    }
    if (error instanceof OpenAI.APIConnectionTimeoutError) return new LlmRequestError('the model did not answer in time.');
    if (error instanceof OpenAI.APIConnectionError) return new LlmRequestError('the model endpoint could not be reached.');
    if (error.status === 429) return new LlmRequestError('the model endpoint is rate-limiting us (429).', 429);
    if (error.status === 401 || error.status === 403) return new LlmRequestError(`the model endpoint refused our API key (${error.status}).`, error.status);
    if (error.status && error.status >= 500) return new LlmRequestError(`the model endpoint had a server error (${error.status}).`, error.status);
    return new LlmRequestError(`the model endpoint rejected the request (${error.status ?? 'no status'}: ${error.message}).`, error.status);
  }
  if (error instanceof Error && error.name === 'AbortError') return new LlmRequestError('the request was cancelled.');
  return new LlmRequestError(`unexpected error talking to the model (${error instanceof Error ? error.message : String(error)}).`);
}
