import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EnvReader, loadConfig, readConfig, secretsOf } from './config.ts';
import { buildPreview } from './core/agent/results/preview.ts';
import { chatRequestBody } from './llm/openai-client.ts';

const base = { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' };
const problems = (env: Record<string, string>) => {
  try {
    loadConfig({ ...base, ...env });
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('preview sizes', () => {
  it('are 4,000 + 1,000 when they fit', () => {
    expect(loadConfig(base).agent.loop.budget).toMatchObject({
      maxChars: 20_000,
      headChars: 4_000,
      tailChars: 1_000,
    });
  });

  it('derive from TOOL_RESULT_MAX_CHARS alone, and the longest preview then fits in it', () => {
    for (const max of [4_000, 1_000, 300]) {
      const { headChars, tailChars } = loadConfig({ ...base, TOOL_RESULT_MAX_CHARS: String(max) })
        .agent.loop.budget;
      expect(headChars).toBeGreaterThan(0);
      expect(headChars).toBeGreaterThanOrEqual(4 * tailChars - 4);
      const preview = buildPreview('x'.repeat(10 * max), 'i'.repeat(64), { headChars, tailChars });
      expect(preview.length).toBeLessThanOrEqual(max);
      expect(preview.length).toBeGreaterThan(max - 40);
    }
  });

  it('give the default room to an explicit other value', () => {
    expect(
      loadConfig({ ...base, TOOL_RESULT_MAX_CHARS: '4000', TOOL_RESULT_PREVIEW_HEAD_CHARS: '3600' })
        .agent.loop.budget,
    ).toMatchObject({ headChars: 3_600, tailChars: 161 });
  });

  it('refuse only explicit values that do not fit, saying which were defaults', () => {
    expect(
      problems({ TOOL_RESULT_MAX_CHARS: '4000', TOOL_RESULT_PREVIEW_HEAD_CHARS: '3900' }),
    ).toEqual([
      'TOOL_RESULT_PREVIEW_HEAD_CHARS (3900) + TOOL_RESULT_PREVIEW_TAIL_CHARS (0, the default) must leave room for the 239-char marker within TOOL_RESULT_MAX_CHARS (4000): at most 3761 together',
    ]);
    expect(
      problems({ TOOL_RESULT_PREVIEW_HEAD_CHARS: '15000', TOOL_RESULT_PREVIEW_TAIL_CHARS: '5000' }),
    ).toEqual([
      'TOOL_RESULT_PREVIEW_HEAD_CHARS (15000) + TOOL_RESULT_PREVIEW_TAIL_CHARS (5000) must leave room for the 239-char marker within TOOL_RESULT_MAX_CHARS (20000): at most 19761 together',
    ]);
  });
});

describe('secrets from files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-secrets-'));
  const file = join(dir, 'openai-key');
  writeFileSync(file, 'sk-from-a-file-0123456789\n');

  it('reads each secret from <NAME>_FILE, and masks what it read', () => {
    expect(loadConfig({ OPENAI_API_KEY_FILE: file }).openai.apiKey).toBe(
      'sk-from-a-file-0123456789',
    );
    expect(secretsOf({ OPENAI_API_KEY_FILE: file })).toContain('sk-from-a-file-0123456789');
  });

  it('names a missing file, and both ways set at once', () => {
    expect(problems({ OPENAI_API_KEY_FILE: join(dir, 'nope') })).toEqual([
      `OPENAI_API_KEY_FILE names a file that cannot be read: ${join(dir, 'nope')}`,
    ]);
    expect(problems({ OPENAI_API_KEY: 'sk-x', OPENAI_API_KEY_FILE: file })).toEqual([
      'OPENAI_API_KEY and OPENAI_API_KEY_FILE are both set; set one',
    ]);
  });

  it('reads DATABASE_URL from a file too, and masks its password', () => {
    const url = join(dir, 'db-url');
    writeFileSync(url, 'postgresql://spool:s3cret-passw0rd@db.internal/spool');
    expect(loadConfig({ ...base, DATABASE_URL_FILE: url }).store.databaseUrl).toBe(
      'postgresql://spool:s3cret-passw0rd@db.internal/spool',
    );
    expect(secretsOf({ DATABASE_URL_FILE: url })).toContain('s3cret-passw0rd');
  });
});

describe('model settings', () => {
  const request = { system: 's', messages: [], tools: [], toolChoice: 'auto' as const };

  it('sends temperature and reasoning effort only when set', () => {
    const set = loadConfig({
      ...base,
      OPENAI_TEMPERATURE: '0.2',
      OPENAI_REASONING_EFFORT: 'low',
    }).openai;
    expect(chatRequestBody(set, request)).toMatchObject({
      temperature: 0.2,
      reasoning_effort: 'low',
    });
    const unset = chatRequestBody(loadConfig(base).openai, request);
    expect('temperature' in unset || 'reasoning_effort' in unset).toBe(false);
  });

  it('names bad values', () => {
    expect(problems({ OPENAI_TEMPERATURE: 'hot', OPENAI_REASONING_EFFORT: 'extreme' })).toEqual([
      'OPENAI_TEMPERATURE must be a number from 0 to 2 (got "hot")',
      'OPENAI_REASONING_EFFORT must be one of minimal, low, medium, high (got "extreme")',
    ]);
  });
});

describe('model endpoint settings', () => {
  it('select Azure OpenAI by AZURE_OPENAI_ENDPOINT, with its own key, and name what is missing or clashing', () => {
    const azure = {
      AZURE_OPENAI_ENDPOINT: 'https://res.openai.azure.com/',
      AZURE_OPENAI_API_KEY: 'azure-key-1',
      OPENAI_API_VERSION: '2024-10-21',
      OPENAI_MODEL: 'my-deployment',
    };
    expect(loadConfig(azure).openai).toMatchObject({
      azure: { endpoint: 'https://res.openai.azure.com', apiVersion: '2024-10-21' },
      apiKey: 'azure-key-1',
      model: 'my-deployment',
    });
    expect(problems({ AZURE_OPENAI_ENDPOINT: 'https://res.openai.azure.com' })).toEqual([
      'AZURE_OPENAI_ENDPOINT and OPENAI_BASE_URL are both set; set one',
      'OPENAI_API_VERSION is required with AZURE_OPENAI_ENDPOINT (for example 2024-10-21)',
    ]);
    expect(secretsOf({ AZURE_OPENAI_API_KEY: 'azure-key-1' })).toEqual(['azure-key-1']);
  });

  it('read OPENAI_CONTEXT_TOKENS and OPENAI_PARALLEL_TOOL_CALLS only when set, and name bad values', () => {
    expect(loadConfig(base).openai).toMatchObject({
      contextTokens: undefined,
      parallelToolCalls: undefined,
    });
    expect(
      loadConfig({ ...base, OPENAI_CONTEXT_TOKENS: '8192', OPENAI_PARALLEL_TOOL_CALLS: 'true' })
        .openai,
    ).toMatchObject({ contextTokens: 8_192, parallelToolCalls: true });
    expect(
      problems({ OPENAI_CONTEXT_TOKENS: '8k', OPENAI_PARALLEL_TOOL_CALLS: 'yes' }),
    ).toHaveLength(2);
  });
});

describe('.env.example', () => {
  const shown = [
    ...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm),
  ].map((m) => [m[1]!, m[2]!] as const);

  it('lists every setting the sections read, and nothing else', () => {
    const read = new Set<string>();
    // Azure OpenAI reads a key of its own; both ways together read every setting.
    for (const model of [{}, { AZURE_OPENAI_ENDPOINT: 'https://res.openai.azure.com' }]) {
      const reader = new EnvReader({
        ...base,
        ...model,
        SLACK_BOT_TOKEN: 'xoxb-1',
        DISCORD_TOKEN: 'd',
        DISCORD_APPLICATION_ID: '1',
      });
      readConfig(reader);
      reader.names.forEach((name) => read.add(name));
    }
    expect(shown.map(([name]) => name).sort()).toEqual([...read].sort());
  });

  it('shows each default as it is', () => {
    const plain = (env: Record<string, string>) =>
      JSON.parse(JSON.stringify(loadConfig({ ...base, ...env })));
    expect(plain(Object.fromEntries(shown.filter(([, value]) => value !== '')))).toEqual(plain({}));
  });
});

describe('POLICY_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-policy-'));

  it('is read once at startup, and every bad entry is named by its path', () => {
    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        rules: [{ match: { platform: 'slack', channel: 'C1' }, tools: ['fs__*'] }],
      }),
    );
    expect(loadConfig({ ...base, POLICY_FILE: good }).delivery.policy).toEqual({
      rules: [{ match: { platform: 'slack', channel: 'C1' }, tools: ['fs__*'] }],
    });
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        rules: [
          { match: { channel: 'C1' }, tools: [1] },
          { match: {}, model: 2 },
        ],
      }),
    );
    expect(problems({ POLICY_FILE: bad })).toEqual([
      'POLICY_FILE: rules[0].tools[0]: must be a non-empty string',
      'POLICY_FILE: rules[1].model: must be a non-empty string',
    ]);
    writeFileSync(bad, '{ rules: [');
    expect(problems({ POLICY_FILE: bad })[0]).toMatch(/^POLICY_FILE is not valid JSON: /);
    expect(problems({ POLICY_FILE: join(dir, 'missing.json') })[0]).toMatch(
      /^POLICY_FILE could not be read \(ENOENT/,
    );
  });
});
