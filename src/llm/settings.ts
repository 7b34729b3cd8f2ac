import type { SettingsReader } from '../core/ports/settings.ts';
import type { OpenAiClientOptions } from './openai-client.ts';

export interface OpenAiSettings extends OpenAiClientOptions {
  /** Ask the endpoint for its models at startup, to name a wrong URL, key or model at once. */
  startupCheck: boolean;
}

/**
 * The model endpoint's section: OPENAI_*, or Azure OpenAI's names (the ones the openai package
 * itself reads).
 */
export function openAiSettings(r: SettingsReader): OpenAiSettings {
  const baseURL = r.url('OPENAI_BASE_URL');
  const azure = azureEndpoint(r, baseURL);
  const apiKey = azure ? r.string('AZURE_OPENAI_API_KEY') : r.string('OPENAI_API_KEY');
  // Local servers (Ollama, vLLM, LM Studio) ignore the key, but the SDK insists on one.
  if (!apiKey && !baseURL)
    r.problem(
      azure
        ? 'AZURE_OPENAI_API_KEY is required with AZURE_OPENAI_ENDPOINT'
        : 'OPENAI_API_KEY is required (or set OPENAI_BASE_URL to a server that needs no key)',
    );
  const optional = <T>(name: string, read: () => T): T | undefined =>
    r.string(name) === undefined ? undefined : read();
  return {
    apiKey: apiKey ?? 'not-needed',
    baseURL,
    azure,
    model: r.string('OPENAI_MODEL') ?? 'gpt-4o-mini',
    contextTokens: optional('OPENAI_CONTEXT_TOKENS', () =>
      r.int('OPENAI_CONTEXT_TOKENS', 0, 1_000),
    ),
    parallelToolCalls: optional('OPENAI_PARALLEL_TOOL_CALLS', () =>
      r.flag('OPENAI_PARALLEL_TOOL_CALLS', true),
    ),
    maxTokens: r.int('OPENAI_MAX_TOKENS', 4_096),
    maxRetries: r.int('OPENAI_MAX_RETRIES', 3, 0),
    timeoutMs: r.int('OPENAI_TIMEOUT_MS', 120_000),
    tokenParam: r.oneOf(
      'OPENAI_TOKEN_PARAM',
      ['auto', 'max_tokens', 'max_completion_tokens'] as const,
      'auto',
    ),
    startupCheck: !r.flag('OPENAI_SKIP_STARTUP_CHECK', false),
    temperature: temperature(r),
    imageInput: r.flag('OPENAI_IMAGE_INPUT', false),
    reasoningEffort: optional('OPENAI_REASONING_EFFORT', () =>
      r.oneOf('OPENAI_REASONING_EFFORT', ['minimal', 'low', 'medium', 'high'] as const, 'medium'),
    ),
  };
}

function temperature(r: SettingsReader): number | undefined {
  const raw = r.string('OPENAI_TEMPERATURE');
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (Number.isFinite(value) && value >= 0 && value <= 2) return value;
  r.problem(`OPENAI_TEMPERATURE must be a number from 0 to 2 (got "${raw}")`);
  return undefined;
}

/** Azure OpenAI, selected by AZURE_OPENAI_ENDPOINT. */
function azureEndpoint(
  r: SettingsReader,
  baseURL: string | undefined,
): OpenAiClientOptions['azure'] {
  const endpoint = r.url('AZURE_OPENAI_ENDPOINT');
  if (!endpoint) return undefined;
  if (baseURL) r.problem('AZURE_OPENAI_ENDPOINT and OPENAI_BASE_URL are both set; set one');
  const apiVersion = r.string('OPENAI_API_VERSION');
  if (!apiVersion)
    r.problem('OPENAI_API_VERSION is required with AZURE_OPENAI_ENDPOINT (for example 2024-10-21)');
  return { endpoint, apiVersion: apiVersion ?? '' };
}
