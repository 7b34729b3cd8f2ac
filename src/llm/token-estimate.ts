import type { LlmRequest } from '../core/ports/llm.ts';
import type { Message } from '../core/ports/conversation.ts';

type CountTokens = (text: string) => number;

/** What each message adds around its text in the chat format (role, separators). */
const PER_MESSAGE_TOKENS = 4;

// OpenAI's current models tokenize with o200k; gpt-4 and gpt-3.5 with cl100k. Others: chars ÷ 4.
const O200K = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-|o\d)/;
const CL100K = /^(gpt-4|gpt-3\.5)/;

/** Whether OpenAI's tokenizer for `model` is known: its count is exact. */
const knownTokenizer = (name: string) => O200K.test(name) || CL100K.test(name);
const bare = (model: string) => model.replace(/^(openai\/|azure\/)/, '');

/**
 * A token counter for `model`: the real tokenizer for OpenAI's models (loaded only then), else
 * chars ÷ 4.
 */
export async function tokenCounter(model: string): Promise<CountTokens> {
  const name = bare(model);
  if (O200K.test(name)) return (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
  if (CL100K.test(name)) return (await import('gpt-tokenizer/encoding/cl100k_base')).countTokens;
  return (text) => Math.ceil(text.length / 4);
}

/**
 * Estimates the prompt tokens of requests as sent: system prompt, every message with its tool
 * calls, and the tool schemas. Each message, and each turn's tool list, is counted once: a turn's
 * requests share those objects (tokenizing a 200,000-char history again took 50-110 ms a step,
 * and a request is estimated twice, to see that it fits and to size its reply).
 */
export function promptEstimator(count: CountTokens): (request: LlmRequest) => number {
  const counted = new WeakMap<Message, number>();
  const tools = new WeakMap<LlmRequest['tools'], number>();
  const ofTools = (specs: LlmRequest['tools']): number => {
    let tokens = tools.get(specs);
    if (tokens === undefined) tools.set(specs, (tokens = count(JSON.stringify(specs))));
    return tokens;
  };
  const ofMessage = (m: Message): number => {
    let tokens = counted.get(m);
    if (tokens === undefined) {
      tokens =
        PER_MESSAGE_TOKENS +
        count(m.content) +
        (m.role === 'assistant' && m.toolCalls ? count(JSON.stringify(m.toolCalls)) : 0);
      counted.set(m, tokens);
    }
    return tokens;
  };
  return (request) =>
    request.messages.reduce(
      (sum, m) => sum + ofMessage(m),
      count(request.system) + ofTools(request.tools) + PER_MESSAGE_TOKENS,
    );
}

/**
 * The most one image sent as input may be billed: OpenAI's high detail at its largest (8 tiles of
 * 512 px; gpt-4o-mini bills each tile 33 times over), 1,536 patches at the dearest multiplier
 * (gpt-4.1-nano), Claude's ~1,600; with the words that introduce the images.
 */
export function imageMostTokens(model: string): number {
  return /^gpt-4o-mini/.test(bare(model)) ? 8 * 5_667 + 2_833 : 3_800;
}

/**
 * An upper bound of the prompt tokens a request may be billed, for a spend cap's hold, where the
 * estimate (`promptEstimator`) may run low: a model whose tokenizer is unknown counts a token a
 * UTF-8 byte (no byte-level tokenizer makes more), not chars ÷ 4, which a tokenizer for code or
 * other scripts exceeds several times over; each tool result's call id counts, and each image
 * sent counts at its most.
 */
export async function promptBound(
  model: string,
  imageInput: boolean,
): Promise<(request: LlmRequest) => number> {
  const count: CountTokens = knownTokenizer(bare(model))
    ? await tokenCounter(model)
    : (text) => Buffer.byteLength(text, 'utf8');
  const estimate = promptEstimator(count);
  const perImage = imageMostTokens(model);
  return (request) => {
    const ids = request.messages.reduce(
      (sum, m) => sum + (m.role === 'tool' ? count(m.toolCallId) : 0),
      0,
    );
    const images = imageInput
      ? [...(request.images?.values() ?? [])].reduce((sum, parts) => sum + parts.length, 0)
      : 0;
    return estimate(request) + ids + images * perImage + (images > 0 ? 16 : 0);
  };
}
