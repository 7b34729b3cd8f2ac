/**
 * The context windows of well-known models, by name: what Spool assumes when neither
 * OPENAI_CONTEXT_TOKENS nor the model server says. One place, each figure with its source.
 *
 * A window here is what a request (prompt and reply) may take. Where a vendor documents a smaller
 * limit on the input than its window (gpt-5), that limit is the figure. Where a model is served at
 * more than one length (Qwen with or without YaRN), the figure is the one it is served at unless
 * its server is told otherwise. A server that serves less says so in its report (a vLLM started
 * with --max-model-len, Ollama's num_ctx), which Spool asks for first; a hosted API that refuses a
 * longer prompt says so in its error, and Spool compacts and tries again.
 */

/** One family, or one model of it, as OpenAI-compatible endpoints name it. */
interface KnownWindow {
  /** The name as its vendor writes it: it matches itself and its dated or suffixed variants. */
  name: string;
  tokens: number;
  /** For families whose names are spelt several ways (llama3.1, Llama-3.1, Meta-Llama-3.1). */
  pattern?: RegExp;
}

// OpenAI: https://platform.openai.com/docs/models (each model's page: "context window").
const OPENAI: KnownWindow[] = [
  { name: 'gpt-3.5-turbo', tokens: 16_385 },
  { name: 'gpt-4', tokens: 8_192 },
  { name: 'gpt-4-32k', tokens: 32_768 },
  { name: 'gpt-4-turbo', tokens: 128_000 },
  { name: 'gpt-4-1106-preview', tokens: 128_000 },
  { name: 'gpt-4-0125-preview', tokens: 128_000 },
  { name: 'gpt-4o', tokens: 128_000 },
  { name: 'chatgpt-4o', tokens: 128_000 },
  { name: 'gpt-4.1', tokens: 1_047_576 },
  // gpt-5's window is 400,000 of which 128,000 are reserved for output: input is at most 272,000.
  // The same for its point releases (gpt-5.1 …), which the pattern takes in.
  { name: 'gpt-5', tokens: 272_000, pattern: /^gpt-5(\.\d+)?(-|$)/ },
  { name: 'gpt-5-chat', tokens: 128_000 },
  { name: 'o1', tokens: 200_000 },
  { name: 'o1-mini', tokens: 128_000 },
  { name: 'o1-preview', tokens: 128_000 },
  { name: 'o3', tokens: 200_000 },
  { name: 'o4-mini', tokens: 200_000 },
  // Open weights: https://huggingface.co/openai/gpt-oss-120b (config: max_position_embeddings).
  { name: 'gpt-oss', tokens: 131_072 },
];

// Anthropic: https://docs.anthropic.com/en/docs/about-claude/models/overview ("context window":
// 200K for every Claude 3 and 4 model; the 1M window of some is a beta a request must ask for).
const ANTHROPIC: KnownWindow[] = [
  { name: 'claude', tokens: 200_000 },
  { name: 'claude-2', tokens: 100_000, pattern: /^claude-2(\.0)?(-|$)/ },
  { name: 'claude-2.1', tokens: 200_000 },
  { name: 'claude-instant', tokens: 100_000 },
];

// Google: https://ai.google.dev/gemini-api/docs/models ("input token limit": 1,048,576 for
// 1.5 Flash, every 2.0 and 2.5 model; 2,097,152 for 1.5 Pro).
const GOOGLE: KnownWindow[] = [
  { name: 'gemini', tokens: 1_048_576 },
  { name: 'gemini-1.5-pro', tokens: 2_097_152 },
  // OpenRouter's older spelling.
  { name: 'gemini-pro-1.5', tokens: 2_097_152 },
  { name: 'gemini-pro', tokens: 32_760 },
  { name: 'gemini-1.0-pro', tokens: 32_760 },
];

// Mistral: https://docs.mistral.ai/getting-started/models/ ("max context"), and the open models'
// cards on https://huggingface.co/mistralai.
const MISTRAL: KnownWindow[] = [
  { name: 'mistral-large', tokens: 131_072 },
  { name: 'mistral-medium', tokens: 131_072 },
  { name: 'mistral-small', tokens: 131_072 },
  { name: 'mistral-nemo', tokens: 131_072 },
  { name: 'open-mistral-nemo', tokens: 131_072 },
  { name: 'ministral', tokens: 131_072 },
  { name: 'pixtral', tokens: 131_072 },
  { name: 'codestral', tokens: 262_144 },
  { name: 'mistral-7b', tokens: 32_768 },
  { name: 'open-mistral-7b', tokens: 32_768 },
  { name: 'mixtral-8x7b', tokens: 32_768 },
  { name: 'open-mixtral-8x7b', tokens: 32_768 },
  { name: 'mixtral-8x22b', tokens: 65_536 },
  { name: 'open-mixtral-8x22b', tokens: 65_536 },
];

// Meta: the model cards on https://huggingface.co/meta-llama (Llama 3: 8K; 3.1, 3.2 and 3.3:
// 128K, 131,072 in config.json). Llama 4's windows (10M Scout, 1M Maverick) are the models';
// providers serve less and report it.
const META: KnownWindow[] = [
  { name: 'llama-3', tokens: 8_192, pattern: /^(meta-)?llama-?3(-|$)/ },
  { name: 'llama-3.1', tokens: 131_072, pattern: /^(meta-)?llama-?3\.[123](-|$)/ },
  { name: 'llama-4-scout', tokens: 10_000_000, pattern: /^(meta-)?llama-?4-scout/ },
  { name: 'llama-4-maverick', tokens: 1_048_576, pattern: /^(meta-)?llama-?4-maverick/ },
];

// Qwen: the model cards on https://huggingface.co/Qwen. Qwen2.5 and Qwen3 are served at 32,768
// unless YaRN is turned on (131,072 then); Qwen3's 2507 releases and Qwen3-Coder at 262,144;
// QwQ-32B at 131,072. Alibaba's API: https://www.alibabacloud.com/help/en/model-studio/models.
const QWEN: KnownWindow[] = [
  { name: 'qwen2.5', tokens: 32_768, pattern: /^qwen-?2\.5(-|$)/ },
  { name: 'qwen3', tokens: 32_768, pattern: /^qwen-?3(-|$)/ },
  { name: 'qwen3-2507', tokens: 262_144, pattern: /^qwen-?3-.*2507/ },
  { name: 'qwen3-coder', tokens: 262_144, pattern: /^qwen-?3-coder/ },
  { name: 'qwq', tokens: 131_072 },
  { name: 'qwen-max', tokens: 32_768 },
  { name: 'qwen-plus', tokens: 131_072 },
  { name: 'qwen-turbo', tokens: 1_000_000 },
];

// DeepSeek: https://api-docs.deepseek.com/quick_start/pricing ("context length": 128K since
// V3.1; it was 64K before, and the API refuses a longer prompt in words, so Spool compacts).
// The open weights: https://huggingface.co/deepseek-ai (DeepSeek-V3, R1: 128K).
const DEEPSEEK: KnownWindow[] = [
  { name: 'deepseek-chat', tokens: 131_072 },
  { name: 'deepseek-reasoner', tokens: 131_072 },
  { name: 'deepseek-v3', tokens: 131_072 },
  { name: 'deepseek-r1', tokens: 131_072 },
];

const KNOWN: KnownWindow[] = [
  ...OPENAI,
  ...ANTHROPIC,
  ...GOOGLE,
  ...MISTRAL,
  ...META,
  ...QWEN,
  ...DEEPSEEK,
];

/**
 * The window Spool assumes for a model it does not know, on a server that does not say. Small
 * enough that most servers serve at least this much (vLLM and llama.cpp default to the model's
 * own length, and every family above has at least 8K); a server that refuses a longer prompt says
 * so and Spool compacts. Ollama and llama.cpp, which may cut a prompt without a word, report their
 * window, and Spool asks them first.
 */
export const DEFAULT_WINDOW = 32_768;

/**
 * The name a table entry is compared with: lower case, without a gateway's `vendor/` (OpenRouter's
 * `openai/gpt-4.1`, Gemini's `models/gemini-2.5-flash`) or a tag after `:` (Ollama's `:8b`,
 * OpenRouter's `:free`).
 */
function bareName(model: string): string {
  const name = model.trim().toLowerCase();
  return name
    .slice(name.lastIndexOf('/') + 1)
    .replace(/:.*$/, '')
    .replace(/_/g, '-');
}

/** Matches the name itself, or it followed by `-` and more: a dated snapshot, a size, a variant. */
const matches = (entry: KnownWindow, name: string) =>
  entry.pattern
    ? entry.pattern.test(name)
    : name === entry.name || name.startsWith(`${entry.name}-`);

/**
 * The known window of `model`, with the table's name for it; undefined when the table does not
 * know it. Of the entries that match, the longest name (the most particular) wins.
 */
export function knownWindow(model: string): { name: string; tokens: number } | undefined {
  const name = bareName(model);
  let best: KnownWindow | undefined;
  for (const entry of KNOWN)
    if (matches(entry, name) && (!best || entry.name.length > best.name.length)) best = entry;
  return best && { name: best.name, tokens: best.tokens };
}
