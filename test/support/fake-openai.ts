import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerWhenDone, readBody } from './http.js';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { inShortRuns } from '../../src/llm/token-estimate.ts';

/** The parts of a Chat Completions request the fake reads. */
export interface ChatRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: string | null;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; parameters?: unknown } }>;
  tool_choice?: string | object;
  parallel_tool_calls?: boolean;
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
}

/** The newest user message's text: the question a request is answering ('' where there is none). */
export const lastUserText = (request: ChatRequest): string =>
  [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/** The texts of a request's user messages, oldest first. */
export const userTexts = (request: ChatRequest) =>
  request.messages.filter((m) => m.role === 'user').map((m) => m.content);

/** Behaviours of particular OpenAI-compatible servers, as their own issue trackers report them. */
export interface ServerQuirks {
  /** Ollama: a prompt over this many chars loses its oldest messages, silently. */
  truncatePromptChars?: number;
  /** vLLM started without --enable-auto-tool-choice: tool_choice "auto" is refused. */
  noToolParser?: boolean;
  /**
   * LM Studio: tool_choice in object form is refused (and its streamed tool calls lose their names,
   * so streaming is refused here).
   */
  lmStudio?: boolean;
  /**
   * Azure OpenAI: one deployment's path, an api-version query and an api-key header, or 404 and
   * 401.
   */
  azure?: { deployment: string; apiVersion: string; apiKey: string };
}

/** OpenAI's reasoning models (the o-series, the gpt-5 family) refuse max_tokens. */
const REASONING_MODEL = /^(o\d|gpt-5)/;

export interface ScriptedReply {
  content?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  finishReason?: 'stop' | 'length' | 'tool_calls';
  /**
   * Reported in place of the fake's own count, odd numbers and all, as a broken server sends it;
   * null: the response carries no usage.
   */
  usage?: Record<string, unknown> | null;
}

export interface ScriptedError {
  status: number;
  message: string;
  code?: string;
  type?: string;
}

export type Script =
  ScriptedReply | ScriptedError | ((request: ChatRequest) => ScriptedReply | ScriptedError);

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Validates a request the way the real API does, returning the error message it would give.
 * Exported so tests can prove the validator itself rejects what it should.
 */
export function validateChatRequest(body: ChatRequest): string | undefined {
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "'messages' must be a non-empty array";
  if (REASONING_MODEL.test(body.model) && body.max_tokens !== undefined) {
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
  }
  for (const tool of body.tools ?? []) {
    if (!TOOL_NAME.test(tool.function?.name ?? ''))
      return `Invalid 'tools[].function.name': string does not match pattern '^[a-zA-Z0-9_-]+$'`;
  }
  const seenIds = new Set<string>();
  let pending: string[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (!['system', 'user', 'assistant', 'tool'].includes(m.role))
      return `Invalid value for 'messages[${i}].role': '${m.role}'`;
    const content = m.content ?? '';
    if (typeof content !== 'string') return `messages[${i}].content must be a string`;
    if (LONE_SURROGATE.test(content))
      return `messages[${i}].content is not valid Unicode (lone surrogate)`;
    if (m.role === 'tool') {
      const index = pending.indexOf(m.tool_call_id ?? '');
      if (index === -1) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[${i}]).`;
      }
      pending.splice(index, 1);
      continue;
    }
    if (pending.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`;
    }
    if (m.role === 'assistant' && m.tool_calls) {
      for (const call of m.tool_calls) {
        if (!TOOL_NAME.test(call.function.name))
          return `Invalid 'messages[${i}].tool_calls[].function.name'`;
        if (typeof call.function.arguments !== 'string')
          return `messages[${i}].tool_calls[].function.arguments must be a string`;
        if (typeof call.id !== 'string' || call.id.length === 0)
          return `Invalid 'messages[${i}].tool_calls[].id': empty string`;
        if (seenIds.has(call.id)) return `Duplicate tool_call_id '${call.id}' in messages[${i}]`;
        if (call.id.length > 40) {
          return `Invalid 'messages[${i}].tool_calls[].id': string too long. Expected a string with maximum length 40, but got a string with length ${call.id.length} instead.`;
        }
        seenIds.add(call.id);
      }
      pending = m.tool_calls.map((c) => c.id);
    } else if (m.role === 'assistant' && !content) {
      return `messages[${i}]: an assistant message needs content or tool_calls`;
    }
  }
  if (pending.length > 0)
    return `The following tool_call_ids did not have response messages: ${pending.join(', ')}`;
  return undefined;
}

/** o200k, quick on long runs of one character (which cost byte-pair merging quadratic time). */
const countTokens = inShortRuns(o200k);

/**
 * A request's prompt as OpenAI counts it, near enough: each message's text and calls, 3 tokens
 * around each, and the tools' schemas.
 */
function promptTokens(body: ChatRequest): number {
  const messages = body.messages.reduce(
    (n, m) =>
      n +
      3 +
      countTokens(m.content ?? '') +
      (m.tool_calls ? countTokens(JSON.stringify(m.tool_calls)) : 0),
    3,
  );
  return messages + (body.tools ? countTokens(JSON.stringify(body.tools)) : 0);
}

/** The usage a completion reports, as OpenAI reports it. */
export interface ServedUsage {
  prompt_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens: number;
  completion_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * A strict OpenAI-compatible Chat Completions server on 127.0.0.1. Replies come from a script,
 * one entry per request; every request is validated first and recorded for assertions.
 */
export class FakeOpenAi {
  readonly requests: ChatRequest[] = [];
  readonly rejections: string[] = [];
  private script: Script[] = [];
  private server?: Server;
  /** Reply used when the script runs out; a test that ends with requests left over fails loudly. */
  fallback: Script | undefined;
  /** When set, requests whose messages exceed this many characters get context_length_exceeded. */
  maxContextChars: number | undefined;
  /**
   * When set, a model's window: a prompt (o200k) and max_tokens that add up to more get
   * context_length_exceeded, as OpenAI answers.
   */
  contextTokens: number | undefined;
  quirks: ServerQuirks = {};
  /** Requests whose prompt the Ollama quirk cut short. */
  truncatedPrompts = 0;
  /** What GET /v1/models lists. */
  models = ['gpt-4o-mini', 'fake-model', 'o3-mini'];
  /** When set, the window GET /v1/models reports on each entry, as vLLM's `max_model_len`. */
  listedWindow: number | undefined;
  /**
   * When set, llama.cpp's server: GET /props (at the root, beside /v1) reports this window as
   * `default_generation_settings.n_ctx`.
   */
  propsWindow: number | undefined;
  /** How long a chat completion takes to come back: a slow model. */
  latencyMs = 0;
  /**
   * The model takes image input: a user message may be text and image_url parts. Off, such a
   * message is refused.
   */
  imageInput = false;
  /** The images requests carried, as data URLs, in order. */
  readonly images: string[] = [];
  /** Every completion answered, when, with the usage it reported. */
  readonly served: Array<{ id: string; request: ChatRequest; usage: ServedUsage; at: number }> = [];

  /** Where the server listens, without the /v1 that most routes sit under. */
  get origin(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  get baseURL(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  enqueue(...entries: Script[]): this {
    this.script.push(...entries);
    return this;
  }

  get pending(): number {
    return this.script.length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      answerWhenDone(req, res, this.handle(req), ({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }

  /** The route a request is for, as the server the quirks describe would route it. */
  private route(
    req: IncomingMessage,
  ): 'models' | 'props' | 'chat' | { status: number; message: string } {
    const url = new URL(req.url ?? '/', 'http://fake');
    const azure = this.quirks.azure;
    const base = azure ? `/openai` : '/v1';
    if (azure && req.headers['api-key'] !== azure.apiKey)
      return {
        status: 401,
        message: 'Access denied due to invalid subscription key or wrong API endpoint.',
      };
    if (azure && url.searchParams.get('api-version') !== azure.apiVersion)
      return { status: 404, message: 'Resource not found' };
    if (req.method === 'GET' && url.pathname === `${base}/models`) return 'models';
    if (req.method === 'GET' && url.pathname === '/props' && this.propsWindow !== undefined)
      return 'props';
    const chat = azure
      ? `${base}/deployments/${azure.deployment}/chat/completions`
      : `${base}/chat/completions`;
    if (req.method === 'POST' && url.pathname === chat) return 'chat';
    return { status: 404, message: `No route ${req.method} ${req.url}` };
  }

  /** What the quirky server refuses that the real API takes. */
  private quirkRefusal(body: ChatRequest): string | undefined {
    if (this.quirks.noToolParser && body.tool_choice === 'auto')
      return '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set';
    if (this.quirks.lmStudio && typeof body.tool_choice === 'object')
      return "Invalid tool_choice type: 'object'. Supported string values: none, auto, required";
    if (this.quirks.lmStudio && body.stream)
      return 'streamed tool calls would lose their names here';
    return undefined;
  }

  /**
   * Ollama's silent truncation: the oldest messages after the system prompt go until the prompt
   * fits.
   */
  private truncate(body: ChatRequest): void {
    const limit = this.quirks.truncatePromptChars;
    const chars = () => body.messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);
    if (limit === undefined || chars() <= limit) return;
    this.truncatedPrompts++;
    while (body.messages.length > 2 && chars() > limit) body.messages.splice(1, 1);
  }

  /**
   * Takes the images out of user messages made of parts, leaving their text, as a vision model
   * reads them.
   */
  private imageParts(body: ChatRequest): string | undefined {
    for (const [i, m] of (body.messages ?? []).entries()) {
      const parts = m.content as unknown;
      if (!Array.isArray(parts)) continue;
      if (!this.imageInput || m.role !== 'user')
        return `messages[${i}].content must be a string: this model does not take image input`;
      for (const part of parts as Array<{
        type: string;
        text?: string;
        image_url?: { url?: string };
      }>) {
        if (
          part.type === 'image_url' &&
          /^data:image\/[a-z+.-]+;base64,[A-Za-z0-9+/=]+$/.test(part.image_url?.url ?? '')
        )
          this.images.push(part.image_url!.url!);
        else if (part.type !== 'text' || typeof part.text !== 'string')
          return `Invalid content part in messages[${i}]`;
      }
      m.content = (parts as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
    }
    return undefined;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    // Routes under /v1 only, as OpenAI's and most compatible servers are.
    const route = this.route(req);
    if (route === 'models') {
      return {
        status: 200,
        body: {
          object: 'list',
          data: this.models.map((id) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: 'fake',
            ...(this.listedWindow === undefined ? {} : { max_model_len: this.listedWindow }),
          })),
        },
      };
    }
    if (route === 'props')
      return {
        status: 200,
        body: {
          default_generation_settings: { id: 0, n_ctx: this.propsWindow, params: {} },
          total_slots: 1,
          model_path: '/models/fake.gguf',
        },
      };
    if (route !== 'chat')
      return {
        status: route.status,
        body: { error: { message: route.message, type: 'invalid_request_error' } },
      };
    const body = JSON.parse(await readBody(req)) as ChatRequest;
    this.requests.push(body);
    const invalid = this.imageParts(body) ?? validateChatRequest(body) ?? this.quirkRefusal(body);
    if (invalid) {
      this.rejections.push(invalid);
      return {
        status: 400,
        body: { error: { message: invalid, type: 'invalid_request_error', code: null } },
      };
    }
    this.truncate(body);
    const size = body.messages.reduce(
      (n, m) => n + (m.content?.length ?? 0) + JSON.stringify(m.tool_calls ?? '').length,
      0,
    );
    if (this.maxContextChars !== undefined && size > this.maxContextChars) {
      return this.error({
        status: 400,
        code: 'context_length_exceeded',
        message: `This model's maximum context length is exceeded (${size} chars).`,
      });
    }
    const tokens = promptTokens(body) + (body.max_tokens ?? body.max_completion_tokens ?? 0);
    if (this.contextTokens !== undefined && tokens > this.contextTokens) {
      this.rejections.push(`context_length_exceeded: ${tokens} tokens`);
      return this.error({
        status: 400,
        code: 'context_length_exceeded',
        message: `This model's maximum context length is ${this.contextTokens} tokens. However, you requested ${tokens} tokens.`,
      });
    }
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const entry = this.script.shift() ?? this.fallback;
    if (!entry) {
      this.rejections.push('script exhausted');
      return {
        status: 500,
        body: { error: { message: 'fake script exhausted', type: 'server_error' } },
      };
    }
    const reply = typeof entry === 'function' ? entry(body) : entry;
    if ('status' in reply) return this.error(reply);
    return { status: 200, body: this.completion(body, reply) };
  }

  private error(e: ScriptedError): { status: number; body: unknown } {
    return {
      status: e.status,
      body: {
        error: {
          message: e.message,
          type: e.type ?? 'invalid_request_error',
          code: e.code ?? null,
        },
      },
    };
  }

  private completion(request: ChatRequest, reply: ScriptedReply): unknown {
    const toolCalls = reply.toolCalls?.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    const content = reply.content ?? null;
    const prompt = 10 * request.messages.length;
    const completion = content?.length ?? 1;
    // All but the newest message as if read from a prompt cache; half the completion reasoning.
    const usage = {
      prompt_tokens: prompt,
      prompt_tokens_details: { cached_tokens: prompt - 10 },
      completion_tokens: completion,
      completion_tokens_details: { reasoning_tokens: Math.floor(completion / 2) },
      total_tokens: prompt + completion,
    };
    const id = `chatcmpl-${this.requests.length}`;
    const reported = reply.usage === undefined ? usage : reply.usage;
    // `served` keeps the fake's own count where a script reported none.
    this.served.push({ id, request, usage: (reported ?? usage) as ServedUsage, at: Date.now() });
    return {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content,
            ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: reply.finishReason ?? (toolCalls?.length ? 'tool_calls' : 'stop'),
        },
      ],
      ...(reported === null ? {} : { usage: reported }),
    };
  }
}
