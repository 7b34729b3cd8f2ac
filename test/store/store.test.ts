import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation, Message } from '../../src/core/ports/conversation.ts';
import type { Database } from '../../src/store/database.ts';
import type { HistorySearch } from '../../src/store/transcripts/history-search.ts';
import type { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { testDatabase, testSearch, testStore, uniqueKey } from '../support/db.ts';

let db: Database;
let store: TranscriptStore;
let search: HistorySearch;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
  search = testSearch(db);
});
afterAll(() => db.close());

/** Stores one tool run (call, result, answer) the way the agent does. */
async function toolRun(
  conversation: Conversation,
  turn: number,
  id: string,
  name: string,
  args: string,
  result: string,
  answer: string,
  derived = false,
) {
  await store.appendMessages(conversation, [
    { role: 'user', content: `please run ${name}`, turn },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id, name, arguments: args, ...(derived ? { derived } : {}) }],
      turn,
    },
  ]);
  await store.appendMessages(
    conversation,
    [{ role: 'tool', toolCallId: id, content: result.slice(0, 50), turn }],
    {
      results: [{ toolCallId: id, content: result, isError: false, durationMs: 5 }],
    },
  );
  await store.appendMessages(conversation, [{ role: 'assistant', content: answer, turn }]);
}

describe('TranscriptStore', () => {
  it('finds the same conversation for the same key and a new one for another thread', async () => {
    const key = uniqueKey();
    const a = await store.openConversation(key);
    expect(await store.openConversation(key)).toEqual(a);
    const b = await store.openConversation({ ...key, thread: 'other' });
    expect(b.id).not.toBe(a.id);
  });

  it('round-trips a transcript in order, tool calls included', async () => {
    const conversation = await store.openConversation(uniqueKey());
    const transcript: Message[] = [
      { role: 'user', content: 'hello 👋', turn: 1 },
      {
        role: 'assistant',
        content: 'checking',
        toolCalls: [{ id: 'c1', name: 'fs__read', arguments: '{"path":"/a"}' }],
        turn: 1,
      },
      { role: 'tool', toolCallId: 'c1', content: 'file body', turn: 1 },
      { role: 'assistant', content: 'done', turn: 1 },
    ];
    await store.appendMessages(conversation, transcript.slice(0, 2));
    await store.appendMessages(conversation, transcript.slice(2));
    expect(await store.loadTranscript(conversation)).toEqual(transcript);
    const call = await db.prisma.toolCall.findFirstOrThrow({
      where: { conversationId: conversation.id },
    });
    expect(call).toMatchObject({
      toolCallId: 'c1',
      toolName: 'fs__read',
      arguments: '{"path":"/a"}',
      turn: 1,
    });
  });

  it('writes the steps of conversations running at once in a few statements, each transcript whole and in order', async () => {
    const conversations = await Promise.all(
      Array.from({ length: 20 }, () => store.openConversation(uniqueKey())),
    );
    const ids = conversations.map((c) => c.id);
    await Promise.all(
      conversations.map((c, n) =>
        toolRun(c, 1, `call_${n}`, 'fs__read', `{"n":${n}}`, `result ${n}`, `answer ${n}`),
      ),
    );
    for (const [n, c] of conversations.entries()) {
      expect(await store.loadTranscript(c)).toEqual([
        { role: 'user', content: 'please run fs__read', turn: 1 },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: `call_${n}`, name: 'fs__read', arguments: `{"n":${n}}` }],
          turn: 1,
        },
        { role: 'tool', toolCallId: `call_${n}`, content: `result ${n}`, turn: 1 },
        { role: 'assistant', content: `answer ${n}`, turn: 1 },
      ]);
      expect(await store.readToolResult(c, `call_${n}`)).toBe(`result ${n}`);
    }
    // Rows written by one statement share its transaction id. The 20 first steps were handed over
    // at once: two went alone (two statements in flight) and the other 18 shared the next one.
    const [row] = await db.prisma.$queryRaw<Array<{ statements: number }>>`
      SELECT count(DISTINCT xmin::text)::int AS statements FROM transcript_messages WHERE conversation_id = ANY(${ids}::uuid[]) AND role = 'user'`;
    expect(row?.statements).toBe(3);
  });

  it('serves a stored result to its conversation and to sibling threads of the channel only', async () => {
    const key = uniqueKey();
    const owner = await store.openConversation(key);
    await toolRun(owner, 1, 'shared_id', 'fs__read', '{}', 'the full text', 'ok');
    const sibling = await store.openConversation({ ...key, thread: 'sibling' });
    const otherChannel = await store.openConversation({ ...key, channel: 'c2' });
    const otherWorkspace = await store.openConversation(uniqueKey());
    expect(await store.readToolResult(owner, 'shared_id')).toBe('the full text');
    expect(await store.readToolResult(sibling, 'shared_id')).toBe('the full text');
    expect(await store.readToolResult(otherChannel, 'shared_id')).toBeUndefined();
    expect(await store.readToolResult(otherWorkspace, 'shared_id')).toBeUndefined();
  });

  it("prefers the conversation's own result when ids repeat across threads", async () => {
    const key = uniqueKey();
    const first = await store.openConversation(key);
    const second = await store.openConversation({ ...key, thread: 't2' });
    await toolRun(first, 1, 'call_0', 'x', '{}', 'first thread', 'ok');
    await toolRun(second, 1, 'call_0', 'x', '{}', 'second thread', 'ok');
    expect(await store.readToolResult(first, 'call_0')).toBe('first thread');
    expect(await store.readToolResult(second, 'call_0')).toBe('second thread');
  });

  it('keeps the bytes of binary parts, and the description of those over the cap', async () => {
    const conversation = await store.openConversation(uniqueKey());
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0xff]);
    await store.appendMessages(conversation, [
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'img', name: 'x', arguments: '{}' }],
        turn: 1,
      },
    ]);
    const binaries = [
      {
        kind: 'image',
        mimeType: 'image/png',
        sizeBytes: png.length,
        base64: png.toString('base64'),
      },
      { kind: 'resource', sizeBytes: 9_000_000 },
    ];
    await store.appendMessages(conversation, [], {
      results: [{ toolCallId: 'img', content: '[image]', isError: false, durationMs: 1, binaries }],
    });
    const rows = await db.prisma.toolResultBinary.findMany({
      where: { result: { call: { conversationId: conversation.id } } },
      orderBy: { position: 'asc' },
    });
    expect(
      rows.map((r) => ({ ...r, resultId: undefined, data: r.data && Buffer.from(r.data) })),
    ).toEqual([
      {
        resultId: undefined,
        position: 0,
        kind: 'image',
        mimeType: 'image/png',
        sizeBytes: 7,
        data: png,
      },
      {
        resultId: undefined,
        position: 1,
        kind: 'resource',
        mimeType: null,
        sizeBytes: 9_000_000,
        data: null,
      },
    ]);
  });

  it('records token usage per conversation, with the step the call produced', async () => {
    const conversation = await store.openConversation(uniqueKey());
    await store.appendMessages(conversation, [{ role: 'assistant', content: 'a', turn: 1 }], {
      usage: { model: 'm', promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
    await store.appendMessages(conversation, [], {
      usage: { model: 'm', promptTokens: 20, completionTokens: 5, totalTokens: 25 },
    });
    const sum = await db.prisma.llmUsage.aggregate({
      where: { conversationId: conversation.id },
      _sum: { totalTokens: true },
    });
    expect(sum._sum.totalTokens).toBe(40);
  });

  it('writes a step whole or not at all', async () => {
    const conversation = await store.openConversation(uniqueKey());
    await store.appendMessages(conversation, [
      { role: 'user', content: 'first', turn: 1, inboxId: '987654321012' },
    ]);
    // The same inbox id again violates its unique index: the step's other rows must not stay
    // behind.
    const step = store.appendMessages(
      conversation,
      [
        {
          role: 'assistant',
          content: 'calling',
          toolCalls: [{ id: 'c9', name: 'x', arguments: '{}' }],
          turn: 1,
        },
        { role: 'user', content: 'again', turn: 2, inboxId: '987654321012' },
      ],
      { usage: { model: 'm', promptTokens: 1, completionTokens: 1, totalTokens: 2 } },
    );
    await expect(step).rejects.toThrow();
    expect(
      await db.prisma.transcriptMessage.count({ where: { conversationId: conversation.id } }),
    ).toBe(1);
    expect(await db.prisma.toolCall.count({ where: { conversationId: conversation.id } })).toBe(0);
    expect(await db.prisma.llmUsage.count({ where: { conversationId: conversation.id } })).toBe(0);
  });

  it('reads only new rows after the first load, including rows another replica wrote', async () => {
    const conversation = await store.openConversation(uniqueKey());
    const other = testStore(db);
    await store.appendMessages(conversation, [{ role: 'user', content: 'one', turn: 1 }]);
    expect(await store.loadTranscript(conversation)).toEqual([
      { role: 'user', content: 'one', turn: 1 },
    ]);
    await other.appendMessages(conversation, [{ role: 'assistant', content: 'two', turn: 1 }]);
    // A changed row that was already read stays as read: the cache holds it, the query skips it.
    await db.prisma.transcriptMessage.updateMany({
      where: { conversationId: conversation.id, content: 'one' },
      data: { content: 'edited' },
    });
    const loaded = await store.loadTranscript(conversation);
    expect(loaded).toEqual([
      { role: 'user', content: 'one', turn: 1 },
      { role: 'assistant', content: 'two', turn: 1 },
    ]);
    loaded.push({ role: 'user', content: 'not stored', turn: 2 });
    expect(await store.loadTranscript(conversation)).toHaveLength(2);
    expect((await testStore(db).loadTranscript(conversation))[0]!.content).toBe('edited');
  });
});

describe('searchHistory', () => {
  const key = uniqueKey({ platform: 'slack', channel: 'C-general' });
  let first: Conversation;

  beforeAll(async () => {
    first = await store.openConversation({ ...key, thread: '100.1' });
    await toolRun(
      first,
      1,
      'call_ls',
      'fs__list_directory',
      '{"path":"/srv/reports"}',
      '[FILE] quarterly.csv\n[FILE] zebra-notes.md',
      'Two files.',
    );
    const later = await store.openConversation({ ...key, thread: '200.1' });
    await toolRun(
      later,
      1,
      'call_cat',
      'fs__read_file',
      '{"path":"/srv/reports/zebra-notes.md"}',
      'zebra migration notes body',
      'The notes talk about zebras.',
    );
    // Same words elsewhere: another channel, a DM, another workspace. None may leak.
    for (const elsewhere of [
      { ...key, channel: 'C-private' },
      { ...key, channel: 'D-dm' },
      { ...uniqueKey({ platform: 'slack' }), channel: 'C-general' },
    ]) {
      const c = await store.openConversation(elsewhere);
      await toolRun(
        c,
        1,
        'call_secret',
        'fs__read_file',
        '{"path":"/srv/reports/zebra-notes.md"}',
        'zebra secret payroll',
        'secret',
      );
    }
  });

  it('finds tool runs by words in their arguments and in their results, newest first', async () => {
    const hits = await search.searchHistory(key, { text: 'zebra', maxResults: 10 });
    expect(hits.map((h) => [h.kind, h.toolCallId ?? null, h.thread])).toEqual([
      ['assistant', null, '200.1'],
      ['tool_result', 'call_cat', '200.1'],
      ['tool_call', 'call_cat', '200.1'],
      ['tool_result', 'call_ls', '100.1'],
    ]);
    expect(hits.some((h) => h.excerpt.includes('payroll'))).toBe(false);
  });

  it('finds a call and its result by the tool name, each with its context either side', async () => {
    const hits = await search.searchHistory(key, { text: 'list_directory', maxResults: 10 });
    const context = {
      before: { role: 'user', text: 'please run fs__list_directory' },
      after: { role: 'assistant', text: 'Two files.' },
    };
    expect(hits.filter((h) => h.kind !== 'user')).toMatchObject([
      {
        kind: 'tool_result',
        toolName: 'fs__list_directory',
        toolCallId: 'call_ls',
        excerpt: '[FILE] quarterly.csv\n[FILE] zebra-notes.md',
        ...context,
      },
      {
        kind: 'tool_call',
        toolName: 'fs__list_directory',
        toolCallId: 'call_ls',
        excerpt: '{"path":"/srv/reports"}',
        ...context,
      },
    ]);
  });

  it('keeps excerpts to 300 chars around the match', async () => {
    const conversation = await store.openConversation({ ...key, thread: '300.1' });
    const long = `${'a'.repeat(5000)} needle ${'b'.repeat(5000)}`;
    await toolRun(conversation, 1, 'call_long', 'x', '{}', long, 'ok');
    const [hit] = await search.searchHistory(key, { text: 'needle', maxResults: 1 });
    expect(hit!.excerpt.length).toBeLessThanOrEqual(300);
    expect(hit!.excerpt).toContain('needle');
  });

  it('never returns another channel, DM or workspace, in any scope', async () => {
    for (const scope of [key, { ...key, channel: 'C-private' }, { ...key, channel: 'D-dm' }]) {
      const hits = await search.searchHistory(scope, { text: 'payroll', maxResults: 50 });
      expect(hits.length).toBe(scope === key ? 0 : 1);
    }
  });

  it('honours max_results, days and the excluded turn', async () => {
    expect(await search.searchHistory(key, { text: 'zebra', maxResults: 2 })).toHaveLength(2);
    // Results, and the index of them, as they would be a month on.
    for (const table of ['tool_results', 'tool_result_chunks']) {
      await db.pool.query(
        `UPDATE ${table} SET created_at = now() - interval '30 days' WHERE channel_key = $1`,
        [JSON.stringify(['slack', key.workspace, key.channel])],
      );
    }
    const recent = await search.searchHistory(key, { text: 'zebra', maxResults: 10, days: 7 });
    expect(recent.map((h) => h.kind)).not.toContain('tool_result');
    const excluded = await search.searchHistory(key, {
      text: 'list_directory',
      maxResults: 10,
      excludeTurn: { conversationId: first.id, turn: 1 },
    });
    expect(excluded.filter((h) => h.kind === 'user')).toHaveLength(0);
  });

  it('filters by tool, server and person in the query: an older run of theirs is found past newer hits', async () => {
    const key = uniqueKey();
    // The asker's run first, then newer runs of another tool, by someone else.
    const asked = await store.openConversation({ ...key, thread: '1.1' });
    const entry = await db.prisma.inboxEntry.create({
      data: {
        platform: 'slack',
        messageKey: `${key.channel}:1.1`,
        kind: 'message',
        userId: 'U-ASKER',
        text: 'please run fs__read',
        delivery: {},
        status: 'answered',
      },
    });
    await store.appendMessages(asked, [
      { role: 'user', content: 'please run fs__read', turn: 1, inboxId: String(entry.id) },
    ]);
    await toolRun(asked, 1, 'mine', 'fs__read', '{"q":"okapi"}', 'okapi facts', 'ok');
    for (let i = 0; i < 3; i++) {
      const other = await store.openConversation({ ...key, thread: `2.${i}` });
      await toolRun(other, 1, `web${i}`, 'web__fetch', '{"q":"okapi"}', 'okapi pages', 'okapi');
    }
    const ids = async (query: { tool?: string; server?: string; person?: string }) =>
      (await search.searchHistory(key, { text: 'okapi', maxResults: 2, ...query })).map(
        (h) => `${h.kind} ${h.toolCallId ?? ''}`,
      );
    // Unfiltered, the newest two are another's.
    expect(await ids({})).not.toContain('tool_result mine');
    expect(await ids({ tool: 'fs__read' })).toEqual(['tool_result mine', 'tool_call mine']);
    expect(await ids({ server: 'fs' })).toEqual(['tool_result mine', 'tool_call mine']);
    expect(await ids({ server: 'f' })).toEqual([]);
    expect(await ids({ person: 'U-ASKER' })).toEqual(['tool_result mine', 'tool_call mine']);
    expect(await ids({ person: 'U-ASKER', server: 'web' })).toEqual([]);
    expect(await ids({ person: 'U-NOBODY' })).toEqual([]);
  });

  it('stores a derived result but never searches it or its call: a fact is found once, in the result it came from', async () => {
    const key = uniqueKey();
    const conversation = await store.openConversation(key);
    await toolRun(
      conversation,
      1,
      'orig',
      'fs__read',
      '{"path":"/notes"}',
      'the zanzibar figure is 42',
      'ok',
    );
    const grep = '{"tool_call_id":"orig","offset":0,"pattern":"zanzibar"}';
    await toolRun(
      conversation,
      1,
      'grep',
      'get_continuation',
      grep,
      '1 matching lines:\n@4: the zanzibar figure is 42',
      'ok',
      true,
    );
    const hits = await search.searchHistory(key, { text: 'zanzibar', maxResults: 10 });
    expect(
      hits
        .filter((h) => h.kind === 'tool_call' || h.kind === 'tool_result')
        .map((h) => [h.kind, h.toolCallId]),
    ).toEqual([['tool_result', 'orig']]);
    expect(await store.readToolResult(conversation, 'grep')).toBe(
      '1 matching lines:\n@4: the zanzibar figure is 42',
    );
  });

  it('finds a fact anywhere in a 2 MB result, with the offset get_continuation reads it from', async () => {
    const conversation = await store.openConversation({ ...key, thread: '400.1' });
    // Emoji are two UTF-16 code units but one character to PostgreSQL: the offset must count units.
    const filler = Array.from(
      { length: 60_000 },
      (_, i) => `row ${i} status ok 🚀 latency ${i % 97} ms`,
    ).join('\n');
    const at = 1_900_000;
    const big = `${filler.slice(0, at)} kilimanjaro-7731 ${filler.slice(at)}`.slice(0, 2_000_000);
    expect(big.length).toBe(2_000_000);
    await toolRun(conversation, 1, 'call_big', 'logs__tail', '{}', big, 'ok');
    expect(
      await db.prisma.toolResult.findFirstOrThrow({
        where: { call: { conversationId: conversation.id } },
        select: { indexed: true },
      }),
    ).toEqual({ indexed: false });

    const [hit] = await search.searchHistory(key, { text: 'kilimanjaro 7731', maxResults: 1 });
    expect(hit).toMatchObject({
      kind: 'tool_result',
      toolCallId: 'call_big',
      offset: big.indexOf('kilimanjaro'),
    });
    expect(hit!.excerpt).toContain('kilimanjaro-7731');
    const chunks = await db.prisma.toolResultChunk.count({
      where: { result: { call: { conversationId: conversation.id } } },
    });
    // 8,000 UTF-16 units each, one less where a cut would split an emoji.
    expect(chunks).toBeGreaterThanOrEqual(Math.ceil(big.length / 8_000));
    expect(chunks).toBeLessThanOrEqual(Math.ceil(big.length / 7_999));
  });
});
