import {
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_CONVERSATION_ID,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
} from '@opentelemetry/semantic-conventions/incubating';
import type { LlmPort, LlmRequest, LlmResponse, LlmUsage } from '../core/ports/llm.ts';
import { isParked, type ToolPort } from '../core/ports/tools.ts';
import type { TurnResult, TurnRunner } from '../core/ports/turns.ts';
import { errorMessage } from '../core/errors.ts';
import type { ModelEndpoint } from './api.ts';
import { chatInput, chatOutput, textMessage } from './messages.ts';

/** How the decorators describe what they trace. */
export interface SpanOptions {
  /** Message text, tool arguments and results go into spans, through `mask`; otherwise never. */
  captureContent: boolean;
  /** Takes secrets out of captured text. */
  mask: (text: string) => string;
}

/**
 * `work` in a span made the active one, so that spans started inside are its children. `finish`
 * reads the result into the span; a throw is recorded as the span's error (its message masked, as
 * logs are) and thrown on.
 */
function inSpan<T>(
  tracer: Tracer,
  mask: (text: string) => string,
  name: string,
  options: { kind: SpanKind; attributes: Attributes },
  work: () => Promise<T>,
  finish: (span: Span, result: T) => void,
): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      const result = await work();
      finish(span, result);
      return result;
    } catch (error) {
      const type = error instanceof Error ? error.name : 'Error';
      const message = mask(errorMessage(error));
      span.setAttribute(ATTR_ERROR_TYPE, type);
      span.recordException({ name: type, message });
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * `target` with `overrides` in place of its methods of those names; every other member is
 * `target`'s, called on it, so that what a port adds later still reaches it untraced.
 */
function decorate<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, name) {
      if (name in overrides) return overrides[name as keyof T];
      const value: unknown = Reflect.get(object, name, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** `value` as one attribute, only when content is captured. */
function content(options: SpanOptions, name: string, value: () => unknown): Attributes {
  if (!options.captureContent) return {};
  const text = value();
  return { [name]: options.mask(typeof text === 'string' ? text : JSON.stringify(text)) };
}

/**
 * A turn: the `invoke_agent` span its model requests and tool calls nest under, one trace per
 * turn. It says where the message came from in messaging terms: the platform, the channel and the
 * thread.
 */
export function tracedTurns(tracer: Tracer, runner: TurnRunner, options: SpanOptions): TurnRunner {
  return decorate(runner, {
    runTurn: (conversation, userText, turnOptions) =>
      inSpan(
        tracer,
        options.mask,
        'invoke_agent Spool',
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
            [ATTR_GEN_AI_AGENT_NAME]: 'Spool',
            [ATTR_GEN_AI_CONVERSATION_ID]: conversation.id,
            [ATTR_MESSAGING_SYSTEM]: conversation.platform,
            [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
            [ATTR_MESSAGING_DESTINATION_NAME]: conversation.channel,
            [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: conversation.thread,
            ...(turnOptions?.inboxId ? { 'spool.inbox.id': turnOptions.inboxId } : {}),
            ...(turnOptions?.policy?.model
              ? { [ATTR_GEN_AI_REQUEST_MODEL]: turnOptions.policy.model }
              : {}),
            ...content(options, ATTR_GEN_AI_INPUT_MESSAGES, () => [textMessage('user', userText)]),
          },
        },
        () => runner.runTurn(conversation, userText, turnOptions),
        (span, result: TurnResult) => {
          span.setAttribute('spool.turn.status', result.status);
          if (result.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
          span.setAttributes(
            content(options, ATTR_GEN_AI_OUTPUT_MESSAGES, () => [
              textMessage('assistant', result.reply),
            ]),
          );
        },
      ),
  });
}

/** Each model request: a `chat {model}` client span with its tokens and finish reason. */
export function tracedLlm(
  tracer: Tracer,
  llm: LlmPort,
  endpoint: ModelEndpoint,
  options: SpanOptions,
): LlmPort {
  return decorate(llm, {
    complete: (request: LlmRequest, signal?: AbortSignal) => {
      const model = request.model ?? endpoint.model;
      return inSpan(
        tracer,
        options.mask,
        `chat ${model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
            [ATTR_GEN_AI_PROVIDER_NAME]: endpoint.azure ? 'azure.ai.openai' : 'openai',
            [ATTR_GEN_AI_REQUEST_MODEL]: model,
            ...(request.maxTokens ? { [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: request.maxTokens } : {}),
            ...content(options, ATTR_GEN_AI_SYSTEM_INSTRUCTIONS, () => [
              { type: 'text', content: request.system },
            ]),
            ...content(options, ATTR_GEN_AI_INPUT_MESSAGES, () => chatInput(request.messages)),
          },
        },
        () => llm.complete(request, signal),
        (span, response: LlmResponse) =>
          span.setAttributes({
            [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [response.finishReason],
            ...(response.usage ? usageAttributes(response.usage) : {}),
            ...content(options, ATTR_GEN_AI_OUTPUT_MESSAGES, () => chatOutput(response)),
          }),
      );
    },
  });
}

/** What the server reported of a request: its model, its id and the tokens, by kind. */
function usageAttributes(usage: LlmUsage): Attributes {
  return {
    [ATTR_GEN_AI_RESPONSE_MODEL]: usage.model,
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: usage.promptTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.completionTokens,
    ...(usage.responseId ? { [ATTR_GEN_AI_RESPONSE_ID]: usage.responseId } : {}),
    ...(usage.cachedPromptTokens === undefined
      ? {}
      : { [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cachedPromptTokens }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { [ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: usage.reasoningTokens }),
  };
}

/**
 * Each tool call: an `execute_tool {name}` span, with the call's id. A call whose result is an
 * error the model reads (`isError`) is marked as failed too.
 */
export function tracedTools(tracer: Tracer, tools: ToolPort, options: SpanOptions): ToolPort {
  return decorate(tools, {
    call: (name, args, context) =>
      inSpan(
        tracer,
        options.mask,
        `execute_tool ${name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
            [ATTR_GEN_AI_TOOL_NAME]: name,
            [ATTR_GEN_AI_TOOL_TYPE]: 'function',
            ...(context.callId ? { [ATTR_GEN_AI_TOOL_CALL_ID]: context.callId } : {}),
            ...content(options, ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, () => args),
          },
        },
        () => tools.call(name, args, context),
        (span, outcome) => {
          // A parked call ends later, in a span of its own.
          if (isParked(outcome)) return span.setAttribute('spool.tool.parked', outcome.parked);
          if (outcome.isError) {
            span.setAttribute(ATTR_ERROR_TYPE, 'tool_error');
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.setAttributes(content(options, ATTR_GEN_AI_TOOL_CALL_RESULT, () => outcome.content));
        },
      ),
  });
}
