import { describe, expect, it } from 'vitest';
import { DEFAULT_WINDOW, knownWindow } from './model-windows.ts';

const tokens = (model: string) => knownWindow(model)?.tokens;

describe('knownWindow', () => {
  it("knows OpenAI's models by their names and dated snapshots, the most particular name first", () => {
    expect(knownWindow('gpt-4.1')).toEqual({ name: 'gpt-4.1', tokens: 1_047_576 });
    expect(knownWindow('gpt-4.1-mini-2025-04-14')).toEqual({ name: 'gpt-4.1', tokens: 1_047_576 });
    expect(tokens('gpt-4o')).toBe(128_000);
    expect(tokens('gpt-4o-mini')).toBe(128_000);
    expect(tokens('gpt-4o-2024-08-06')).toBe(128_000);
    expect(tokens('gpt-4')).toBe(8_192);
    expect(tokens('gpt-4-0613')).toBe(8_192);
    expect(tokens('gpt-4-turbo-2024-04-09')).toBe(128_000);
    expect(tokens('gpt-4-32k')).toBe(32_768);
    expect(tokens('gpt-3.5-turbo-0125')).toBe(16_385);
    // gpt-5's input limit, not its 400,000 window with the output reserved in it.
    expect(tokens('gpt-5')).toBe(272_000);
    expect(tokens('gpt-5-mini-2025-08-07')).toBe(272_000);
    expect(tokens('gpt-5.1')).toBe(272_000);
    expect(tokens('gpt-5-chat-latest')).toBe(128_000);
    expect(tokens('o3-mini')).toBe(200_000);
    expect(tokens('o1-mini')).toBe(128_000);
    expect(tokens('o4-mini-2025-04-16')).toBe(200_000);
    expect(tokens('gpt-oss-120b')).toBe(131_072);
  });

  it("reads through a gateway's vendor/ prefix and a tag after a colon", () => {
    expect(knownWindow('openai/gpt-4.1')).toEqual({ name: 'gpt-4.1', tokens: 1_047_576 });
    expect(tokens('anthropic/claude-3.5-sonnet')).toBe(200_000);
    expect(tokens('google/gemini-2.5-flash')).toBe(1_048_576);
    expect(tokens('models/gemini-2.5-pro')).toBe(1_048_576);
    expect(tokens('meta-llama/llama-3.3-70b-instruct:free')).toBe(131_072);
    expect(tokens('deepseek/deepseek-chat-v3-0324')).toBe(131_072);
    expect(tokens('mistralai/mistral-large-2411')).toBe(131_072);
  });

  it('knows the Claude, Gemini, Mistral, Llama, Qwen and DeepSeek families', () => {
    expect(tokens('claude-3-5-sonnet-20241022')).toBe(200_000);
    expect(tokens('claude-sonnet-4-20250514')).toBe(200_000);
    expect(tokens('claude-opus-4-1')).toBe(200_000);
    expect(tokens('claude-2.0')).toBe(100_000);
    expect(tokens('claude-2.1')).toBe(200_000);
    expect(tokens('claude-instant-1.2')).toBe(100_000);
    expect(tokens('gemini-1.5-pro-002')).toBe(2_097_152);
    expect(tokens('gemini-2.0-flash-lite')).toBe(1_048_576);
    expect(tokens('gemini-pro')).toBe(32_760);
    expect(tokens('codestral-latest')).toBe(262_144);
    expect(tokens('open-mistral-nemo')).toBe(131_072);
    expect(tokens('mistralai/Mistral-7B-Instruct-v0.3')).toBe(32_768);
    expect(tokens('mixtral-8x22b-instruct')).toBe(65_536);
    // Llama, spelt as Hugging Face, Ollama, Groq and the model cards spell it.
    expect(tokens('meta-llama/Llama-3.1-8B-Instruct')).toBe(131_072);
    expect(tokens('Meta-Llama-3.1-70B-Instruct')).toBe(131_072);
    expect(tokens('llama3.1:8b')).toBe(131_072);
    expect(tokens('llama-3.3-70b-versatile')).toBe(131_072);
    expect(tokens('llama3:8b')).toBe(8_192);
    expect(tokens('Meta-Llama-3-8B-Instruct')).toBe(8_192);
    // Qwen as served without YaRN, and the releases that take more.
    expect(tokens('Qwen/Qwen2.5-7B-Instruct')).toBe(32_768);
    expect(tokens('qwen/qwen-2.5-72b-instruct')).toBe(32_768);
    expect(tokens('qwen3:8b')).toBe(32_768);
    expect(tokens('Qwen/Qwen3-235B-A22B-Instruct-2507')).toBe(262_144);
    expect(tokens('qwen3-coder-30b-a3b-instruct')).toBe(262_144);
    expect(tokens('qwen-plus')).toBe(131_072);
    expect(tokens('deepseek-reasoner')).toBe(131_072);
    expect(tokens('deepseek-ai/DeepSeek-R1')).toBe(131_072);
  });

  it('knows no other model, and a name that only begins like a known one is not taken for it', () => {
    expect(knownWindow('fake-model')).toBeUndefined();
    expect(knownWindow('acme')).toBeUndefined();
    expect(knownWindow('gpt-4x')).toBeUndefined();
    expect(knownWindow('claudette')).toBeUndefined();
    expect(knownWindow('')).toBeUndefined();
    expect(DEFAULT_WINDOW).toBe(32_768);
  });
});
