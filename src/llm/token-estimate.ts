import type { LlmRequest } from '../core/ports/llm.ts';
import type { Message } from '../core/ports/conversation.ts';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { toOpenAi, toOpenAiTools } from './chat-messages.ts';

type CountTokens = (text: string) => number;

/** What each message adds around its text in the chat format (role, separators). */
const PER_MESSAGE_TOKENS = 4;

// OpenAI's current models tokenize with o200k; gpt-4 and gpt-3.5 with cl100k.
const O200K = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-|o\d)/;
const CL100K = /^(gpt-4|gpt-3\.5)/;

/** Whether OpenAI's tokenizer for `model` is known: its count is exact. */
const knownTokenizer = (name: string) => O200K.test(name) || CL100K.test(name);
const bare = (model: string) => model.replace(/^(openai\/|azure\/)/, '');

/**
 * How much more than o200k a model whose tokenizer is unknown may count. Measured on this
 * project's payloads (2,000-char prose and JSON records, 90 tool calls as sent, call ids, docs/,
 * src/core/agent/, Japanese): Llama 3's tokenizer counts 0.94-1.01 times o200k's, cl100k's
 * 0.99-1.25, Mistral's 32k SentencePiece 1.17-1.28 (JSON the most). Chars ÷ 4, the estimate
 * before, counted 0.28-0.97 times o200k: 0.61 on JSON, 0.44 on call ids.
 */
export const UNKNOWN_TOKENIZER_MARGIN = 0.3;

/**
 * A token counter for `model` and whether its count is exact: OpenAI's tokenizer for its models;
 * for any other, o200k, whose count another model's tokenizer may exceed (see
 * `UNKNOWN_TOKENIZER_MARGIN`). Each tokenizer is loaded once, when first asked for.
 */
export async function tokenCounter(model: string): Promise<{ count: CountTokens; exact: boolean }> {
  const name = bare(model);
  if (CL100K.test(name) && !O200K.test(name))
    return {
      count: inShortRuns((await import('gpt-tokenizer/encoding/cl100k_base')).countTokens),
      exact: true,
    };
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  return { count: inShortRuns(countTokens), exact: O200K.test(name) };
}

/** The longest run of one character class a tokenizer is given at once. */
export const LONGEST_RUN = 256;

/**
 * A run of letters, of punctuation or of whitespace longer than `LONGEST_RUN`, matched only from
 * the run's start (the lookbehinds): tried from every position inside runs just short of it, the
 * search took 2.5 s a megabyte.
 */
const LONG_RUN = new RegExp(
  [
    `(?<![\\p{L}\\p{M}])[\\p{L}\\p{M}]{${LONGEST_RUN + 1},}`,
    `(?<![^\\s\\p{L}\\p{M}\\p{N}])[^\\s\\p{L}\\p{M}\\p{N}]{${LONGEST_RUN + 1},}`,
    `(?<!\\s)\\s{${LONGEST_RUN + 1},}`,
  ].join('|'),
  'gu',
);

/**
 * `count`, given long runs of one character class in pieces of `LONGEST_RUN`. The tokenizers'
 * pre-split leaves such a run (a line of `=`, base64 padding, a megabyte of spaces) one piece,
 * and byte-pair merging is quadratic in a piece's length: 300,000 `x` took 45 s on one core,
 * blocking every conversation of the process. Cut, a run counts at most a token a piece more,
 * and ordinary text, whose pieces are short, counts exactly as before.
 */
export function inShortRuns(count: CountTokens): CountTokens {
  return (text) => {
    if (!mayHoldLongRun(text)) return count(text);
    let tokens = 0;
    let from = 0;
    for (const run of text.matchAll(LONG_RUN)) {
      tokens += count(text.slice(from, run.index));
      for (const piece of pieces(run[0])) tokens += count(piece);
      from = run.index + run[0].length;
    }
    return tokens + count(from === 0 ? text : text.slice(from));
  };
}

/**
 * Whether `text` may hold a run longer than `LONGEST_RUN`: exact on ASCII, where a character's
 * class is read from its code; any other character is taken to continue a run of each class. It
 * reads text four times as fast as `LONG_RUN`'s search, which runs only where it answers yes.
 */
export function mayHoldLongRun(text: string): boolean {
  if (text.length <= LONGEST_RUN) return false;
  let letters = 0;
  let others = 0;
  let spaces = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const lower = c | 32;
    if (c >= 128) {
      letters++;
      others++;
      spaces++;
    } else if (lower >= 97 && lower <= 122) {
      letters++;
      others = spaces = 0;
    } else if (c >= 48 && c <= 57) {
      letters = others = spaces = 0;
    } else if (c === 32 || (c >= 9 && c <= 13)) {
      spaces++;
      letters = others = 0;
    } else {
      others++;
      letters = spaces = 0;
    }
    if (letters > LONGEST_RUN || others > LONGEST_RUN || spaces > LONGEST_RUN) return true;
  }
  return false;
}

/** `run` in pieces of `LONGEST_RUN` UTF-16 units, never splitting a surrogate pair. */
function* pieces(run: string): Generator<string> {
  for (let start = 0; start < run.length;) {
    let end = Math.min(start + LONGEST_RUN, run.length);
    if (end < run.length && /[\udc00-\udfff]/.test(run[end]!)) end += 1;
    yield run.slice(start, end);
    start = end;
  }
}

/**
 * Estimates the prompt tokens of requests in the form they are sent (`chatRequestBody`): the
 * system prompt, every message as Chat Completions takes it (its tool calls with their ids and
 * type, a result's call id), and the tools' schemas as sent. Each message, and each turn's tool
 * list, is counted once and the last system prompt kept: a turn's requests share those objects
 * (tokenizing a 200,000-char history again took 50-110 ms a step, and a request is estimated
 * several times, to see that it fits, what room its results have, and to size its reply); a tool
 * list the same as the last one counted, schema for schema, is not tokenized again either.
 */
export function promptEstimator(count: CountTokens): (request: LlmRequest) => number {
  const counted = new WeakMap<Message, number>();
  const tools = new WeakMap<LlmRequest['tools'], number>();
  // The last system prompt and tool list counted, by their text: each request builds its tool
  // list anew, of the same schemas as the last but where a server or the turn changed them.
  const last = (): { text: string; tokens: number } => ({ text: '', tokens: 0 });
  let system = last();
  let toolsSent = last();
  const ofText = (kept: { text: string; tokens: number }, text: string) =>
    text === kept.text ? kept : { text, tokens: count(text) };
  const ofSystem = (text: string): number => (system = ofText(system, text)).tokens;
  const ofTools = (specs: LlmRequest['tools']): number => {
    let tokens = tools.get(specs);
    if (tokens === undefined) {
      toolsSent = ofText(toolsSent, JSON.stringify(toOpenAiTools(specs)));
      tools.set(specs, (tokens = toolsSent.tokens));
    }
    return tokens;
  };
  const ofMessage = (m: Message): number => {
    let tokens = counted.get(m);
    if (tokens === undefined) counted.set(m, (tokens = PER_MESSAGE_TOKENS + ofSent(toOpenAi(m))));
    return tokens;
  };
  const ofSent = (sent: ChatCompletionMessageParam): number =>
    (typeof sent.content === 'string' ? count(sent.content) : 0) +
    (sent.role === 'assistant' && sent.tool_calls ? count(JSON.stringify(sent.tool_calls)) : 0) +
    (sent.role === 'tool' ? count(sent.tool_call_id) : 0);
  return (request) =>
    request.messages.reduce(
      (sum, m) => sum + ofMessage(m),
      ofSystem(request.system) + ofTools(request.tools) + 2 * PER_MESSAGE_TOKENS,
    );
}

const withMargin = (
  estimate: (request: LlmRequest) => number,
  exact: boolean,
): ((request: LlmRequest) => number) =>
  exact ? estimate : (request) => Math.ceil(estimate(request) * (1 + UNKNOWN_TOKENIZER_MARGIN));

const utf8Bytes: CountTokens = (text) => Buffer.byteLength(text, 'utf8');

/**
 * The estimate the window is kept by: the count of what is sent, and for a model whose tokenizer
 * is unknown, the margin another tokenizer may need over it (a request filled to the window by
 * an undercount is refused).
 */
export async function windowEstimator(model: string): Promise<(request: LlmRequest) => number> {
  const { count, exact } = await tokenCounter(model);
  return withMargin(promptEstimator(count), exact);
}

/**
 * An upper bound of `windowEstimator(model)`'s estimate that needs no tokenizer: a UTF-8 byte a
 * token, since no byte-level tokenizer's token is shorter than a byte. What fits by this bound
 * fits by the estimate, so the tokenizer (80-200 ms of CPU to load) is loaded only where the bound
 * does not settle a question (see `OpenAiChatClient.within`): never for a first short reply.
 */
export function windowBound(model: string): (request: LlmRequest) => number {
  return withMargin(promptEstimator(utf8Bytes), knownTokenizer(bare(model)));
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
 * other scripts exceeds several times over; each image sent counts at its most.
 */
export async function promptBound(
  model: string,
  imageInput: boolean,
): Promise<(request: LlmRequest) => number> {
  const count: CountTokens = knownTokenizer(bare(model))
    ? (await tokenCounter(model)).count
    : utf8Bytes;
  const estimate = promptEstimator(count);
  const perImage = imageMostTokens(model);
  return (request) => {
    const images = imageInput
      ? [...(request.images?.values() ?? [])].reduce((sum, parts) => sum + parts.length, 0)
      : 0;
    return estimate(request) + images * perImage + (images > 0 ? 16 : 0);
  };
}
