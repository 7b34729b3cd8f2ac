// The model's window without OPENAI_CONTEXT_TOKENS: what the server reports, through the real
// openai SDK and real HTTP, used for pages, budgets and compaction, and named in the log at start.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import type { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import {
  lastMessage,
  markedCallId,
  nextOffset,
  openAiClientFor,
  testAgent,
  testTool,
} from '../support/agent.ts';
import { databaseKind, testDatabase, testStore, uniqueKey } from '../support/db.ts';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { runSpool } from '../support/process.ts';
import { fileDatabaseUrl } from '../support/file-database.ts';

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
});
afterAll(async () => {
  await fake.stop();
  await db.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.rejections.length = 0;
  fake.fallback = undefined;
  fake.listedWindow = undefined;
  fake.propsWindow = undefined;
  fake.contextTokens = undefined;
});

// 60,000 chars of report lines: one fact near the end, found only by reading on.
const report =
  Array.from(
    { length: 900 },
    (_, i) => `Row ${i}: the regional office filed its weekly summary, nothing unusual to report.`,
  ).join('\n') + '\nThe audit reference is AUD-4471.\n';

/** Reads the report page by page, then answers with the reference it saw. */
const reader = () => {
  fake.fallback = (request) => {
    const last = lastMessage(request);
    if (last.role === 'user') return { toolCalls: [{ id: 'r', name: 'report', arguments: '{}' }] };
    const offset = nextOffset(last.content ?? '');
    if (offset !== undefined)
      return {
        toolCalls: [
          {
            id: 'p',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: markedCallId(last.content ?? ''), offset }),
          },
        ],
      };
    const seen = request.messages.map((m) => m.content ?? '').join('\n');
    return { content: /AUD-\d+/.exec(seen)?.[0] ?? 'not found' };
  };
};

describe('a server that reports its window', () => {
  it("vLLM's max_model_len on /models takes the default's place, and every request fits it", async () => {
    // The server refuses what its window cannot hold, as vLLM does.
    fake.listedWindow = 3_000;
    fake.contextTokens = 3_000;
    const llm = openAiClientFor(fake, 0, { maxTokens: 4_096 });
    expect(llm.contextWindow).toMatchObject({ tokens: 32_768, source: { kind: 'default' } });
    expect(await llm.checkEndpoint()).toBeUndefined();
    expect(await llm.learnWindow()).toEqual({
      tokens: 3_000,
      source: { kind: 'server', what: 'vLLM max_model_len' },
      model: 'fake-model',
    });
    // The listing checkEndpoint fetched was read again, not fetched twice: no chat request yet.
    expect(fake.requests).toHaveLength(0);

    reader();
    const agent = testAgent({
      fake,
      store,
      llm,
      tools: [testTool('report', () => ({ content: report, isError: false }))],
    });
    const { reply, status } = await agent.runTurn(
      await store.openConversation(uniqueKey()),
      'read the report and give me the audit reference',
    );
    expect([reply, status]).toEqual(['AUD-4471', 'ok']);
    // Nothing refused: the reported window, not the default's 32,768, sized every request, its
    // reply budget and its pages.
    expect(fake.rejections).toEqual([]);
    expect(fake.requests.length).toBeGreaterThan(10);
    for (const request of fake.requests) expect(request.max_tokens).toBeLessThan(3_000);
  });

  it("llama.cpp's /props n_ctx, asked at the server's root when the listing names none", async () => {
    fake.propsWindow = 8_192;
    const llm = openAiClientFor(fake);
    expect((await llm.learnWindow()).source).toEqual({ kind: 'server', what: 'llama.cpp n_ctx' });
    expect(llm.contextWindow.tokens).toBe(8_192);
    const request = {
      system: 'x'.repeat(4_000),
      messages: [],
      tools: [],
      toolChoice: 'auto' as const,
      maxTokens: 256,
    };
    // The room a page may fill is the reported window's, not the default's.
    const unreported = openAiClientFor(fake, 0, { contextTokens: 32_768 });
    expect((await unreported.room(request))! - (await llm.room(request))!).toBe(32_768 - 8_192);
    // 40,000 chars of prose: 9,501 tokens by o200k (a run of one letter is 8 chars a token).
    const prose =
      'The ledger for this record was filed on day 17, and nothing unusual came of it. ';
    expect(await llm.fits({ ...request, system: prose.repeat(500).slice(0, 40_000) })).toBe(false);
  });

  it('answers by the count where a byte a token is over the window: the same fit and reply budget', async () => {
    fake.propsWindow = 8_192;
    const llm = openAiClientFor(fake);
    await llm.learnWindow();
    // 20,000 bytes, past the window at a byte a token; 2,500 tokens by o200k (8 chars a token).
    const request = {
      system: 'x'.repeat(20_000),
      messages: [],
      tools: [],
      toolChoice: 'auto' as const,
      maxTokens: 2_000,
    };
    expect(await llm.fits(request)).toBe(true);
    fake.fallback = () => ({ content: 'ok' });
    await llm.complete(request);
    expect(fake.requests.at(-1)?.max_tokens).toBe(2_000);
    // 39,200 bytes, 4,900 tokens: the reply is cut to what the window leaves beside the prompt.
    const longer = { ...request, system: 'x'.repeat(39_200) };
    await llm.complete(longer);
    const left = (await llm.room({ ...longer, maxTokens: 0 }))!;
    expect(left).toBeLessThan(2_000);
    expect(fake.requests.at(-1)?.max_tokens).toBe(left);
  });

  it('OPENAI_CONTEXT_TOKENS comes first: the server is not asked over it', async () => {
    fake.listedWindow = 3_000;
    const llm = openAiClientFor(fake, 0, { contextTokens: 50_000 });
    expect(await llm.learnWindow()).toMatchObject({ tokens: 50_000, source: { kind: 'setting' } });
  });

  it('without a report the known model keeps its window, and an unknown one the default', async () => {
    expect((await openAiClientFor(fake, 0, { model: 'gpt-4o-mini' }).learnWindow()).tokens).toBe(
      128_000,
    );
    expect(await openAiClientFor(fake).learnWindow()).toMatchObject({
      tokens: 32_768,
      source: { kind: 'default' },
    });
  });

  it('names where the window came from when it leaves no room for a conversation', async () => {
    fake.propsWindow = 600;
    const llm = openAiClientFor(fake);
    await llm.learnWindow();
    expect(
      await llm.windowProblem({
        system: 'x'.repeat(2_000),
        messages: [],
        tools: [],
        toolChoice: 'auto',
      }),
    ).toMatch(/^The model's window \(600 tokens, reported by the server: llama\.cpp n_ctx\)/);
  });
});

describe('spool chat says at start where the window came from', () => {
  let dataDir: string;
  let databaseEnv: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'spool-window-'));
    databaseEnv =
      databaseKind() === 'embedded' ? { DATA_DIR: dataDir } : { DATABASE_URL: fileDatabaseUrl() };
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('one line, from the server that reports it', async () => {
    fake.listedWindow = 20_000;
    fake.fallback = { content: 'hello' };
    const run = await runSpool(['chat', '--session', `window-${Date.now()}`], {
      env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_MODEL: 'fake-model', ...databaseEnv },
      input: 'hi\n',
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.includes('Model window:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'Model window: 20,000 tokens (reported by the server: vLLM max_model_len)',
    );
  });
});
