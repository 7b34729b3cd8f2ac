import OpenAI, { AzureOpenAI } from 'openai';
import { followingSignal } from '../signals.ts';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { Dispatcher } from 'undici';
import { secretMasker } from '../core/redact.ts';
import { fetchThrough } from '../proxy.ts';
import {
  ContextLengthError,
  LlmRequestError,
  type FinishReason,
  type LlmPort,
  type LlmRequest,
  type LlmResponse,
} from '../core/ports/llm.ts';
import { toOpenAi, toOpenAiTools } from './chat-messages.ts';
import { promptBound, windowBound, windowEstimator } from './token-estimate.ts';
import { askServer, assumedWindow, windowSource, type ModelWindow } from './context-window.ts';
import { readUsage } from './usage.ts';
import { errorMessage } from '../core/errors.ts';

export interface OpenAiClientOptions {
  apiKey: string;
  baseURL?: string;
  /** Azure OpenAI: `model` names the deployment; the key goes in the api-key header. */
  azure?: { endpoint: string; apiVersion: string };
  model: string;
  maxTokens: number;
  /**
   * The model's context window (OPENAI_CONTEXT_TOKENS): a request estimated not to fit with its
   * output budget is compacted before it is sent, for servers that cut an over-long prompt without
   * a word (Ollama). Unset, the window is what the server reports (`learnWindow`), else the known
   * model's, else a default (see context-window.ts).
   */
  contextTokens?: number;
  /** Sent when set: llama.cpp's server makes parallel calls only when asked. */
  parallelToolCalls?: boolean;
  /**
   * How the output budget is sent. `auto` sends max_tokens and, when the server refuses it for
   * max_completion_tokens (OpenAI's reasoning models), switches for the life of the process.
   */
  tokenParam?: 'auto' | TokenParam;
  /** Reach the endpoint through this (a proxy: see `proxyFromEnv`). */
  dispatcher?: Dispatcher;
  /** The model takes image input: images shared in a turn are sent to it, not only described. */
  imageInput?: boolean;
  /** Sent only when set: servers and models differ in what they accept. */
  temperature?: number;
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /** The SDK retries 429, 408, 409 and 5xx with exponential backoff this many times. */
  maxRetries: number;
  timeoutMs: number;
}

// OpenAI says code context_length_exceeded; vLLM, Ollama, LM Studio and llama.cpp say it in words.
const CONTEXT_LENGTH =
  /context[_ ]length|maximum context|context window|too many tokens|prompt is too long/i;

/**
 * A tool message cannot carry an image: the images of a run of tool results follow it as one user
 * message, which the API accepts after the results it answers.
 */
function withImages(
  messages: ChatCompletionMessageParam[],
  images: LlmRequest['images'],
): ChatCompletionMessageParam[] {
  if (!images?.size) return messages;
  return messages.flatMap((m, i) => {
    const next = messages[i + 1];
    if (m.role !== 'tool' || next?.role === 'tool') return [m];
    let first = i;
    while (messages[first - 1]?.role === 'tool') first--;
    const parts = messages
      .slice(first, i + 1)
      .flatMap((t) => (t.role === 'tool' ? (images.get(t.tool_call_id) ?? []) : []));
    if (parts.length === 0) return [m];
    const content = [
      { type: 'text' as const, text: 'The images of the results above, as images:' },
      ...parts.map((p) => ({
        type: 'image_url' as const,
        image_url: { url: `data:${p.mimeType};base64,${p.base64}` },
      })),
    ];
    return [m, { role: 'user' as const, content }];
  });
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

type TokenParam = 'max_tokens' | 'max_completion_tokens';

/** The least output budget a request goes with in a small window: less is hardly a reply. */
const MIN_REPLY_TOKENS = 256;
/** What a window must hold beyond the fixed part and a reply, for a message and what it brings. */
const MIN_CONVERSATION_TOKENS = 256;

/** The body of one Chat Completions request, exactly as `complete` sends it. */
export function chatRequestBody(
  options: Pick<
    OpenAiClientOptions,
    'model' | 'maxTokens' | 'temperature' | 'reasoningEffort' | 'parallelToolCalls' | 'imageInput'
  >,
  request: LlmRequest,
  tokenParam: TokenParam = 'max_tokens',
): ChatCompletionCreateParamsNonStreaming {
  const tools = toOpenAiTools(request.tools);
  return {
    model: request.model ?? options.model,
    [tokenParam]: request.maxTokens ?? options.maxTokens,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.reasoningEffort === undefined ? {} : { reasoning_effort: options.reasoningEffort }),
    messages: [
      { role: 'system', content: request.system },
      ...withImages(
        request.messages.map(toOpenAi),
        options.imageInput ? request.images : undefined,
      ),
    ],
    ...(tools.length > 0 ? { tools, tool_choice: request.toolChoice } : {}),
    ...(tools.length > 0 && options.parallelToolCalls !== undefined
      ? { parallel_tool_calls: options.parallelToolCalls }
      : {}),
  };
}

/** The core's LLM port over any OpenAI-compatible Chat Completions endpoint. */
export class OpenAiChatClient implements LlmPort {
  private readonly client: OpenAI;
  private tokenParam: TokenParam;
  private estimatePrompt?: Promise<(request: LlmRequest) => number>;
  /** An upper bound of `estimatePrompt`'s estimate with no tokenizer: see `within`. */
  private readonly boundPrompt: (request: LlmRequest) => number;
  /** Upper bounds of a request's prompt, by the model it names (see `mostTokens`). */
  private readonly bounds = new Map<string, Promise<(request: LlmRequest) => number>>();
  /** The model's context window and where it came from: see `learnWindow`. */
  private window: ModelWindow;
  /** The endpoint's `/models` entries, as `checkEndpoint` found them. */
  private listing?: readonly unknown[];

  constructor(private readonly options: OpenAiClientOptions) {
    this.window = assumedWindow(options.model, options.contextTokens);
    const common = {
      apiKey: options.apiKey,
      maxRetries: options.maxRetries,
      timeout: options.timeoutMs,
      ...(options.dispatcher ? { fetch: fetchThrough(options.dispatcher) } : {}),
    };
    const { azure } = options;
    this.client = azure
      ? new AzureOpenAI({
          ...common,
          endpoint: azure.endpoint,
          apiVersion: azure.apiVersion,
          deployment: options.model,
        })
      : new OpenAI({ ...common, baseURL: options.baseURL });
    this.tokenParam =
      options.tokenParam === 'max_completion_tokens' ? 'max_completion_tokens' : 'max_tokens';
    this.boundPrompt = windowBound(options.model);
  }

  async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse> {
    const completion = await this.create(
      { ...request, maxTokens: await this.replyBudget(request) },
      signal,
    );
    const choice = completion.choices[0];
    if (!choice) throw new LlmRequestError('The model returned no choices.');
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((c) =>
      c.type === 'function'
        ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' }]
        : [],
    );
    return {
      content: choice.message.content ?? '',
      toolCalls,
      finishReason: finishReason(choice.finish_reason),
      usage: readUsage(completion.usage, completion.model || this.options.model, completion.id),
    };
  }

  /**
   * An upper bound, for a spend cap's hold: the prompt bounded by the tokenizer of the model the
   * request names (a channel's may differ from OPENAI_MODEL), and the reply budget it is sent with.
   */
  async mostTokens(request: LlmRequest): Promise<number> {
    const model = request.model ?? this.options.model;
    let bound = this.bounds.get(model);
    if (!bound) this.bounds.set(model, (bound = promptBound(model, !!this.options.imageInput)));
    return (await bound)(request) + (await this.replyBudget(request));
  }

  /** The model's context window, and where it came from. */
  get contextWindow(): ModelWindow {
    return this.window;
  }

  async room(request: LlmRequest): Promise<number | undefined> {
    const contextTokens = this.window.tokens;
    const reply = request.maxTokens ?? this.options.maxTokens;
    return contextTokens - (await this.estimate(request)) - reply;
  }

  fits(request: LlmRequest): Promise<boolean> {
    return this.within(request, this.window.tokens - this.replyFloor(request));
  }

  /**
   * Whether the window leaves room for a conversation beside what every request carries (`fixed`:
   * the system prompt and the tools' schemas): one line naming what to change, or undefined.
   */
  async windowProblem(fixed: LlmRequest): Promise<string | undefined> {
    const contextTokens = this.window.tokens;
    const floor = this.replyFloor(fixed);
    if (await this.within(fixed, contextTokens - floor - MIN_CONVERSATION_TOKENS)) return undefined;
    const tokens = await this.estimate(fixed);
    const raise =
      this.window.source.kind === 'setting'
        ? 'raise OPENAI_CONTEXT_TOKENS'
        : "give the model a larger window (or set OPENAI_CONTEXT_TOKENS if the server's is larger)";
    return (
      `The model's window (${contextTokens} tokens, ${windowSource(this.window)}) leaves no room for a conversation: the system prompt and ${fixed.tools.length} tools' schemas take about ${tokens} tokens, ` +
      `and a reply needs at least ${floor}. Offer fewer tools (mcp.json), ${raise}, or lower OPENAI_MAX_TOKENS.`
    );
  }

  /** The request's estimated prompt: the model's tokenizer is loaded when first needed. */
  private estimate(request: LlmRequest): Promise<number> {
    this.estimatePrompt ??= windowEstimator(this.options.model);
    return this.estimatePrompt.then((estimate) => estimate(request));
  }

  /**
   * Whether the request's estimated prompt is at most `tokens`: settled by the bound where it can
   * be, so that the tokenizer, 80-200 ms of CPU to load, is not loaded for a start's first short
   * reply, nor counts what surely fits; by the estimate itself only where the bound is over.
   */
  private async within(request: LlmRequest, tokens: number): Promise<boolean> {
    return this.boundPrompt(request) <= tokens || (await this.estimate(request)) <= tokens;
  }

  private replyFloor(request: LlmRequest): number {
    return Math.min(request.maxTokens ?? this.options.maxTokens, MIN_REPLY_TOKENS);
  }

  /**
   * The output budget a request is sent with: what it asks for, cut to what the window leaves
   * after the estimated prompt, never below the floor. A long reply cut short is continued.
   */
  private async replyBudget(request: LlmRequest): Promise<number> {
    const wanted = request.maxTokens ?? this.options.maxTokens;
    const floor = this.replyFloor(request);
    // The bound settles most; where it does not, the estimate is counted once.
    if (this.boundPrompt(request) <= this.window.tokens - wanted) return Math.max(floor, wanted);
    const room = this.window.tokens - (await this.estimate(request));
    return Math.max(floor, Math.min(wanted, room));
  }

  /**
   * Asks the endpoint for its models once, so that a wrong URL, key or model is named at startup
   * rather than on every message. Returns what is wrong, with the likely fix, or undefined.
   */
  async checkEndpoint(): Promise<string | undefined> {
    const where =
      this.options.azure?.endpoint ?? this.options.baseURL ?? 'https://api.openai.com/v1';
    try {
      const listed = (await this.client.models.list({ timeout: 5_000, maxRetries: 0 })).data;
      this.listing = listed;
      const models = listed.map((m) => m.id);
      // Azure lists base models; OPENAI_MODEL names a deployment, which is not among them.
      if (this.options.azure || models.length === 0 || models.includes(this.options.model))
        return undefined;
      return `${where} does not list the model "${this.options.model}" (OPENAI_MODEL); it lists ${models.slice(0, 5).join(', ')}${models.length > 5 ? ', …' : ''}`;
    } catch (error) {
      if (error instanceof OpenAI.APIConnectionError)
        return `${where} could not be reached: is the server running, and is OPENAI_BASE_URL right?`;
      if (error instanceof OpenAI.APIError && error.status === 404)
        return `${where}/models answered 404: OPENAI_BASE_URL probably needs /v1 at its end`;
      if (error instanceof OpenAI.APIError && (error.status === 401 || error.status === 403))
        return `${where} refused the API key (${error.status}): check ${keySetting(this.options)}`;
      return `${where}/models failed: ${translateError(error, this.options).message}`;
    }
  }

  /**
   * Asks the model server for its window, unless OPENAI_CONTEXT_TOKENS set it: the `/models`
   * listing `checkEndpoint` fetched (vLLM, OpenRouter), then llama.cpp's, Ollama's and LM Studio's
   * own routes, each with a short timeout. What a server reports takes the place of the known
   * model's window or the default; when none answers, those stay. Never throws.
   */
  async learnWindow(): Promise<ModelWindow> {
    const { baseURL, azure } = this.options;
    // OpenAI's and Azure's listings name no window: the table knows their models.
    if (this.window.source.kind === 'setting' || !baseURL || azure) return this.window;
    const listing =
      this.listing ??
      (await this.client.models
        .list({ timeout: 5_000, maxRetries: 0 })
        .then((page) => page.data as readonly unknown[])
        .catch(() => []));
    const reported = await askServer({
      baseURL,
      apiKey: this.options.apiKey,
      model: this.options.model,
      listing,
      dispatcher: this.options.dispatcher,
    });
    if (reported)
      this.window = {
        tokens: reported.tokens,
        source: { kind: 'server', what: reported.what },
        model: this.options.model,
      };
    return this.window;
  }

  private async create(
    request: LlmRequest,
    signal?: AbortSignal,
  ): Promise<OpenAI.Chat.Completions.ChatCompletion> {
    // The SDK adds an abort listener to the signal it is given and never removes it: on a turn's
    // (or a lane's) long-lived signal they would pile up, one per request.
    const following = signal && followingSignal(signal);
    try {
      return await this.client.chat.completions.create(
        chatRequestBody(this.options, request, this.tokenParam),
        { signal: following?.signal },
      );
    } catch (error) {
      if (!this.switchedTokenParam(error)) throw translateError(error, this.options);
      return this.create(request, signal);
    } finally {
      following?.release();
    }
  }

  /** On the documented refusal of max_tokens, switches to max_completion_tokens once, for good. */
  private switchedTokenParam(error: unknown): boolean {
    if ((this.options.tokenParam ?? 'auto') !== 'auto' || this.tokenParam !== 'max_tokens')
      return false;
    if (
      !(error instanceof OpenAI.APIError) ||
      error.status !== 400 ||
      !/max_completion_tokens/.test(error.message)
    )
      return false;
    this.tokenParam = 'max_completion_tokens';
    return true;
  }
}

const keySetting = (options: Pick<OpenAiClientOptions, 'azure'>) =>
  options.azure ? 'AZURE_OPENAI_API_KEY' : 'OPENAI_API_KEY';

/**
 * One sentence for the user: no doubled status code, the hint that helps, and our API key never
 * in it (some servers echo a refused key back in their error text).
 */
function translateError(
  error: unknown,
  options: Pick<OpenAiClientOptions, 'apiKey' | 'azure'>,
): Error {
  if (error instanceof OpenAI.APIError) {
    // The SDK's message starts with the status; a server's own text often repeats it.
    const stripped = error.message.replace(/^(\d{3}\s+)+/, '');
    const detail = secretMasker([options.apiKey])(stripped);
    const code = typeof error.code === 'string' ? error.code : '';
    if (
      code === 'context_length_exceeded' ||
      ((error.status === 400 || error.status === 413) && CONTEXT_LENGTH.test(error.message))
    ) {
      return new ContextLengthError(error.message);
    }
    if (error instanceof OpenAI.APIConnectionTimeoutError)
      return new LlmRequestError('the model did not answer in time.');
    if (error instanceof OpenAI.APIConnectionError)
      return new LlmRequestError('the model endpoint could not be reached.');
    if (error.status === 429)
      return new LlmRequestError('the model endpoint is rate-limiting us (429).', 429);
    if (error.status === 401 || error.status === 403) {
      return new LlmRequestError(
        `the model endpoint refused our API key (${error.status}); whoever runs this bot should check ${keySetting(options)}.`,
        error.status,
      );
    }
    if (error.status === 404) {
      return new LlmRequestError(
        `the model endpoint answered 404 (${detail}): OPENAI_BASE_URL probably needs /v1 at its end, or OPENAI_MODEL names no model there.`,
        404,
      );
    }
    if (/enable-auto-tool-choice|tool-call-parser/.test(error.message)) {
      return new LlmRequestError(
        'the model server does not parse tool calls; whoever runs it should start vLLM with --enable-auto-tool-choice and a --tool-call-parser for this model.',
        error.status,
      );
    }
    if (error.status && error.status >= 500)
      return new LlmRequestError(
        `the model endpoint had a server error (${error.status}).`,
        error.status,
      );
    return new LlmRequestError(
      `the model endpoint rejected the request (${error.status ?? 'no status'}: ${detail}).`,
      error.status,
    );
  }
  if (error instanceof Error && error.name === 'AbortError')
    return new LlmRequestError('the request was cancelled.');
  return new LlmRequestError(`unexpected error talking to the model (${errorMessage(error)}).`);
}
