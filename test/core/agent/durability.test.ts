import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/store/database.ts';
import { TranscriptStore } from '../../../src/store/transcripts/transcript-store.ts';
import { searchHistoryTool } from '../../../src/core/builtins/search-history.ts';
import { lastMessage, sentCallIds, testAgent, testTool } from '../../support/agent.ts';
import { databaseKind, testSearch, uniqueKey } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { silentLogger } from '../../support/logger.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

let fake: FakeOpenAi;
let dataDir: string;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dataDir = await mkdtemp(join(tmpdir(), 'spool-durability-'));
});
afterAll(async () => {
  await fake.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** A fresh process's view of the database: the embedded one from its directory, or the server. */
const reopen = (): Promise<Database> =>
  openDatabase({
    databaseUrl: databaseKind() === 'postgres' ? fileDatabaseUrl() : undefined,
    dataDir,
    logger: silentLogger,
    poolSize: 2,
  });

const full = `${'report line\n'.repeat(4_000)}FINAL TOTAL: 42\n`;

describe('across restarts', () => {
  it('keeps the conversation, and get_continuation reads a result from an earlier turn', async () => {
    const key = uniqueKey();
    let db = await reopen();
    let store = new TranscriptStore(db);
    fake.enqueue(
      { toolCalls: [{ id: 'call_report', name: 'report', arguments: '{}' }] },
      { content: 'The report is long.' },
    );
    await testAgent({
      fake,
      store,
      tools: [testTool('report', () => ({ content: full, isError: false }))],
    }).runTurn(await store.openConversation(key), 'get the report');
    await db.close();

    db = await reopen();
    store = new TranscriptStore(db);
    const reportId = sentCallIds(fake.requests.at(-1)!)[0];
    const middle = Math.floor(full.length / 2);
    fake.requests.length = 0;
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'call_page',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: reportId, offset: middle }),
          },
        ],
      },
      { content: 'The total is 42.' },
    );
    const { reply } = await testAgent({ fake, store }).runTurn(
      await store.openConversation(key),
      'what was the final total?',
    );
    await db.close();

    expect(reply).toBe('The total is 42.');
    const sent = fake.requests[0]!.messages.map((m) => m.role === 'user' && m.content);
    expect(sent).toContain('get the report');
    // A part the preview in view does not show: read from the store the restarted process opened.
    expect(lastMessage(fake.requests[1]!).content).toMatch(
      new RegExp(`^${full.slice(middle, middle + 2_000)}`),
    );
    expect(fake.rejections).toEqual([]);
  });

  it('turns a call interrupted by a crash into an error result the API accepts', async () => {
    const key = uniqueKey();
    let db = await reopen();
    let store = new TranscriptStore(db);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hang = testTool('deploy', () => {
      started();
      return new Promise(() => {}); // the process "dies" while this runs
    });
    fake.enqueue({
      toolCalls: [{ id: 'call_deploy', name: 'deploy', arguments: '{"env":"prod"}' }],
    });
    void testAgent({ fake, store, tools: [hang] })
      .runTurn(await store.openConversation(key), 'deploy it')
      .catch(() => {});
    await running;
    await db.close();

    db = await reopen();
    store = new TranscriptStore(db);
    const conversation = await store.openConversation(key);
    const calls = await db.prisma.toolCall.findMany({
      where: { conversationId: conversation.id },
      include: { result: true },
    });
    expect(calls.map((c) => [c.modelCallId, c.arguments, c.result])).toEqual([
      ['call_deploy', '{"env":"prod"}', null],
    ]);
    fake.requests.length = 0;
    fake.enqueue({ content: 'The deploy was interrupted; shall I retry?' });
    const { reply } = await testAgent({ fake, store }).runTurn(conversation, 'did it work?');
    await db.close();

    expect(reply).toBe('The deploy was interrupted; shall I retry?');
    expect(fake.rejections).toEqual([]);
    // The next turn shows turn 1's call under its alias (t1c1), which get_continuation reads by.
    expect(fake.requests[0]!.messages.find((m) => m.tool_call_id === 't1c1')!.content).toMatch(
      /interrupted before it finished/,
    );
  });
});

describe('search_history through a turn', () => {
  it('recalls an earlier tool run of the channel when the user asks in plain words', async () => {
    const db = await reopen();
    const store = new TranscriptStore(db);
    const key = uniqueKey();
    const tools = [
      testTool('fs__list_directory', () => ({
        content: '[FILE] budget.xlsx\n[DIR] invoices',
        isError: false,
      })),
      searchHistoryTool(testSearch(db)),
    ];
    fake.enqueue(
      {
        toolCalls: [
          { id: 'call_ls', name: 'fs__list_directory', arguments: '{"path":"/finance"}' },
        ],
      },
      { content: 'One file and one folder.' },
    );
    await testAgent({ fake, store, tools }).runTurn(
      await store.openConversation({ ...key, thread: 'first' }),
      'list /finance',
    );

    fake.requests.length = 0;
    fake.enqueue(
      {
        toolCalls: [
          { id: 'call_search', name: 'search_history', arguments: '{"query":"list_directory"}' },
        ],
      },
      { content: 'It returned budget.xlsx and invoices.' },
    );
    const { reply } = await testAgent({ fake, store, tools }).runTurn(
      await store.openConversation({ ...key, thread: 'second' }),
      'what did the list_directory tool return earlier?',
    );
    const lsId = (
      await db.prisma.toolCall.findFirstOrThrow({
        where: { modelCallId: 'call_ls', channelKey: { contains: key.workspace } },
      })
    ).toolCallId;
    await db.close();

    expect(reply).toBe('It returned budget.xlsx and invoices.');
    const result = lastMessage(fake.requests[1]!).content ?? '';
    expect(result).toMatch(/^2 matches for "list_directory", newest first:/);
    expect(result).toContain(`TOOL RESULT fs__list_directory tool_call_id="${lsId}"`);
    expect(result).toContain(`TOOL CALL fs__list_directory tool_call_id="${lsId}"`);
    expect(result).toContain('before: USER: "list /finance"');
    expect(result).toContain('after: ASSISTANT: "One file and one folder."');
    expect(result).not.toContain('what did the list_directory tool return earlier');
  });
});
