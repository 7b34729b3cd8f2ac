import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StepEvent } from '../../../src/core/agent/hooks.ts';
import { parsePage } from '../../../src/core/markers.ts';
import type { Conversation } from '../../../src/core/ports/conversation.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { defaultPageOptions, openAiClientFor, testAgent, testTool } from '../../support/agent.ts';
import { testDatabase, testStore, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { readerModel } from '../../support/readers.ts';

let db: Database;
let store: TranscriptStore;
let fake: FakeOpenAi;
let conversation: Conversation;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  fake = await new FakeOpenAi().start();
});
afterAll(async () => {
  await fake.stop();
  await db.close();
});
beforeEach(async () => {
  fake.requests.length = 0;
  fake.rejections.length = 0;
  fake.contextTokens = undefined;
  conversation = await store.openConversation(uniqueKey());
});

/** Log lines to `chars`, with a fact planted at each tenth of the way. */
function document(chars: number): { text: string; facts: string[] } {
  const lines = Array.from(
    { length: Math.ceil(chars / 60) },
    (_, i) => `2026-11-02T10:${String(i % 60).padStart(2, '0')}:00Z INFO batch=${i} status=ok`,
  );
  const facts = Array.from({ length: 10 }, (_, i) => `FACT f${i}: value-${i * 7919}`);
  facts.forEach((fact, i) => lines.splice(Math.floor(((i + 0.5) / 10) * lines.length), 0, fact));
  return { text: lines.join('\n'), facts };
}

const WINDOW = 128_000;

/** An agent whose model reads the whole of `text` and lists its facts, in a window when given. */
function reader(text: string, contextTokens: number | undefined, steps: StepEvent[] = []) {
  fake.contextTokens = contextTokens;
  fake.fallback = readerModel(
    () => ({ id: 'open', name: 'doc', arguments: '{}' }),
    /FACT f\d: value-\d+/g,
  );
  return testAgent({
    fake,
    store,
    llm: openAiClientFor(fake, 0, { model: 'gpt-4o-mini', contextTokens }),
    tools: [testTool('doc', () => ({ content: text, isError: false }))],
    hooks: { onStepFinish: (event) => void steps.push(event) },
  });
}

/** The pages the turn read, as stored. */
async function storedPages() {
  return (await store.loadTranscript(conversation)).flatMap((m) => {
    const page = m.role === 'tool' ? parsePage(m.content) : undefined;
    return page ? [page] : [];
  });
}

describe('pages sized by what the window can still take', () => {
  it('reads a 90,000-char document that fits the window in one page: the open, one page, the answer', async () => {
    const { text, facts } = document(90_000);
    const { reply } = await reader(text, WINDOW).runTurn(conversation, 'list every fact');
    expect(reply.split('\n').sort()).toEqual([...facts].sort());
    expect(fake.requests).toHaveLength(3);
    const pages = await storedPages();
    expect(pages).toHaveLength(1);
    expect(pages[0]!.span[1]).toBe(text.length);
    expect(fake.rejections).toEqual([]);
  });

  it('without a known window, reads it in pages of a preview’s size, as before', async () => {
    const { text, facts } = document(90_000);
    const { reply } = await reader(text, undefined).runTurn(conversation, 'list every fact');
    expect(reply.split('\n').sort()).toEqual([...facts].sort());
    const pages = await storedPages();
    expect(pages.map((p) => p.text.length).slice(0, -1)).toEqual(
      pages.slice(0, -1).map(() => defaultPageOptions.chunkChars),
    );
    expect(fake.requests).toHaveLength(pages.length + 2);
  });

  it('reads a 400,000-char document, more than the turn’s budget holds, as without a window, and says what it could not hold', async () => {
    const { text } = document(400_000);
    const steps: StepEvent[] = [];
    const windowed = await reader(text, WINDOW, steps).runTurn(conversation, 'list every fact');
    const inWindow = (await storedPages()).map((p) => p.span);
    conversation = await store.openConversation(uniqueKey());
    const unknown = await reader(text, undefined).runTurn(conversation, 'list every fact');
    expect(inWindow).toEqual((await storedPages()).map((p) => p.span));
    expect(inWindow.at(-1)![1]).toBe(text.length);
    expect(windowed.reply).toBe(unknown.reply);
    expect(windowed.reply).toMatch(/I could not hold all of it/);
    // Every request fitted at once: none refused, none needed older turns compacted harder.
    expect(fake.rejections).toEqual([]);
    expect(steps.map((s) => s.level)).toEqual(steps.map(() => 0));
  });
});
