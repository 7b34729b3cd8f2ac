import type { LlmRequest } from '../core/types.ts';

type CountTokens = (text: string) => number;

/** What each message adds around its text in the chat format (role, separators). */
const PER_MESSAGE_TOKENS = 4;

// OpenAI's current models tokenize with o200k; gpt-4 and gpt-3.5 with cl100k. Others: chars ÷ 4.
const O200K = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-|o\d)/;
const CL100K = /^(gpt-4|gpt-3\.5)/;

/** A token counter for `model`: the real tokenizer for OpenAI's models (loaded only then), else chars ÷ 4. */
export async function tokenCounter(model: string): Promise<CountTokens> {
  const name = model.replace(/^(openai\/|azure\/)/, '');
  if (O200K.test(name)) return (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
  if (CL100K.test(name)) return (await import('gpt-tokenizer/encoding/cl100k_base')).countTokens;
  return (text) => Math.ceil(text.length / 4);
}

/** The prompt tokens of a request as sent: system prompt, every message with its tool calls, and the tool schemas. */
export function estimatePromptTokens(request: LlmRequest, count: CountTokens): number {
  let tokens = count(request.system) + count(JSON.stringify(request.tools)) + PER_MESSAGE_TOKENS;
  for (const m of request.messages) {
    tokens += PER_MESSAGE_TOKENS + count(m.content);
    if (m.role === 'assistant' && m.toolCalls) tokens += count(JSON.stringify(m.toolCalls));
  }
  return tokens;
}
