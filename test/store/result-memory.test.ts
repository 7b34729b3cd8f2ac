import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Conversation } from '../../src/core/ports/conversation.ts';
import type { Database } from '../../src/store/database.ts';
import type { HistorySearch } from '../../src/store/transcripts/history-search.ts';
import type { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { testDatabase, testSearch, testStore, uniqueKey } from '../support/db.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** MB of JavaScript heap still reachable: what the process holds on to, garbage collected. */
function liveHeapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

const STEPS = 8;
const RESULT_CHARS = 2_000_000;

let db: Database;
let store: TranscriptStore;
let search: HistorySearch;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  search = testSearch(db);
});
afterAll(() => db.close());

/** One tool run whose result is `chars` long, written as the agent writes it, then indexed. */
async function storeResult(conversation: Conversation, turn: number, chars: number) {
  const id = `call-${turn}`;
  await store.appendMessages(conversation, [
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id, name: 'fs__read', arguments: '{}' }],
      turn,
    },
  ]);
  // Each result its own string, as each read of a file is.
  const content = `result ${turn} `.padEnd(chars, 'a line of a large log file\n');
  await store.appendMessages(conversation, [{ role: 'tool', toolCallId: id, content: '…', turn }], {
    results: [{ toolCallId: id, content, isError: false, durationMs: 1 }],
  });
  await search.searchHistory(conversation, { text: `result ${turn}`, maxResults: 1 });
}

it('keeps no copy of large results once their steps are written and indexed', async () => {
  const conversation = await store.openConversation(uniqueKey());
  await storeResult(conversation, 1, 1_000); // the statements' first runs, with what they set up
  const before = liveHeapMb();
  for (let turn = 2; turn < 2 + STEPS; turn++) await storeResult(conversation, turn, RESULT_CHARS);
  const grown = liveHeapMb() - before;
  // Any copy kept of each result would be 2 MB a step, 16 MB in all.
  expect(grown).toBeLessThan(4);
  expect(
    (await store.readToolResult(conversation, `call-${STEPS + 1}`))?.length,
    'the last result, stored whole',
  ).toBe(RESULT_CHARS);
});
