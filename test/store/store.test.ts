import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation, Message } from '../../src/core/types.ts';
import type { Database } from '../../src/store/database.ts';
import { PrismaStore } from '../../src/store/prisma-store.ts';
import { testDatabase, testStore, uniqueKey } from '../support/db.ts';

let db: Database;
let store: PrismaStore;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore(db);
});
afterAll(() => db.close());

/** Stores one tool run (call, result, answer) the way the agent does. */
async function toolRun(conversation: Conversation, turn: number, id: string, name: string, args: string, result: string, answer: string) {
  await store.appendMessages(conversation, [
    { role: 'user', content: `please run ${name}`, turn },
    { role: 'assistant', content: '', toolCalls: [{ id, name, arguments: args }], turn },
  ]);
  await store.recordToolResult(conversation, { toolCallId: id, content: result, isError: false, durationMs: 5 });
  await store.appendMessages(conversation, [
    { role: 'tool', toolCallId: id, content: result.slice(0, 50), turn },
    { role: 'assistant', content: answer, turn },
  ]);
}

describe('PrismaStore', () => {
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
      { role: 'assistant', content: 'checking', toolCalls: [{ id: 'c1', name: 'fs__read', arguments: '{"path":"/a"}' }], turn: 1 },
      { role: 'tool', toolCallId: 'c1', content: 'file body', turn: 1 },
      { role: 'assistant', content: 'done', turn: 1 },
    ];
    await store.appendMessages(conversation, transcript.slice(0, 2));
    await store.appendMessages(conversation, transcript.slice(2));
    expect(await store.loadTranscript(conversation)).toEqual(transcript);
    const call = await db.prisma.toolCall.findFirstOrThrow({ where: { conversationId: conversation.id } });
    expect(call).toMatchObject({ toolCallId: 'c1', toolName: 'fs__read', arguments: '{"path":"/a"}', turn: 1 });
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

  it('caps stored results with a marker and records the original size', async () => {
    const capped = testStore(db, 100);
    const conversation = await capped.openConversation(uniqueKey());
    await capped.appendMessages(conversation, [{ role: 'assistant', content: '', toolCalls: [{ id: 'big', name: 'x', arguments: '{}' }], turn: 1 }]);
    await capped.recordToolResult(conversation, { toolCallId: 'big', content: 'y'.repeat(250), isError: false, durationMs: 1 });
    const stored = await capped.readToolResult(conversation, 'big');
    expect(stored).toBe(`${'y'.repeat(100)}\n[Spool stored only the first 100 of 250 chars of this result (TOOL_RESULT_STORE_MAX_CHARS)]`);
    const row = await db.prisma.toolResult.findFirstOrThrow({ where: { call: { conversationId: conversation.id } } });
    expect(row.contentChars).toBe(250);
  });

  it('records token usage per conversation', async () => {
    const conversation = await store.openConversation(uniqueKey());
    await store.recordUsage(conversation, { model: 'm', promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    await store.recordUsage(conversation, { model: 'm', promptTokens: 20, completionTokens: 5, totalTokens: 25 });
    const sum = await db.prisma.llmUsage.aggregate({ where: { conversationId: conversation.id }, _sum: { totalTokens: true } });
    expect(sum._sum.totalTokens).toBe(40);
  });
});

describe('searchHistory', () => {
  const key = uniqueKey({ platform: 'slack', channel: 'C-general' });
  let first: Conversation;

  beforeAll(async () => {
    first = await store.openConversation({ ...key, thread: '100.1' });
    await toolRun(first, 1, 'call_ls', 'fs__list_directory', '{"path":"/srv/reports"}', '[FILE] quarterly.csv\n[FILE] zebra-notes.md', 'Two files.');
    const later = await store.openConversation({ ...key, thread: '200.1' });
    await toolRun(later, 1, 'call_cat', 'fs__read_file', '{"path":"/srv/reports/zebra-notes.md"}', 'zebra migration notes body', 'The notes talk about zebras.');
    // Same words elsewhere: another channel, a DM, another workspace. None may leak.
    for (const elsewhere of [{ ...key, channel: 'C-private' }, { ...key, channel: 'D-dm' }, { ...uniqueKey({ platform: 'slack' }), channel: 'C-general' }]) {
      const c = await store.openConversation(elsewhere);
      await toolRun(c, 1, 'call_secret', 'fs__read_file', '{"path":"/srv/reports/zebra-notes.md"}', 'zebra secret payroll', 'secret');
    }
  });

  it('finds tool runs by words in their arguments and in their results, newest first', async () => {
    const hits = await store.searchHistory(key, { text: 'zebra', maxResults: 10 });
    expect(hits.map((h) => [h.kind, h.toolCallId ?? null, h.thread])).toEqual([
      ['assistant', null, '200.1'],
      ['tool_result', 'call_cat', '200.1'],
      ['tool_call', 'call_cat', '200.1'],
      ['tool_result', 'call_ls', '100.1'],
    ]);
    expect(hits.some((h) => h.excerpt.includes('payroll'))).toBe(false);
  });

  it('finds a call and its result by the tool name, each with its context either side', async () => {
    const hits = await store.searchHistory(key, { text: 'list_directory', maxResults: 10 });
    const context = { before: { role: 'user', text: 'please run fs__list_directory' }, after: { role: 'assistant', text: 'Two files.' } };
    expect(hits.filter((h) => h.kind !== 'user')).toMatchObject([
      { kind: 'tool_result', toolName: 'fs__list_directory', toolCallId: 'call_ls', excerpt: '[FILE] quarterly.csv\n[FILE] zebra-notes.md', ...context },
      { kind: 'tool_call', toolName: 'fs__list_directory', toolCallId: 'call_ls', excerpt: '{"path":"/srv/reports"}', ...context },
    ]);
  });

  it('keeps excerpts to 300 chars around the match', async () => {
    const conversation = await store.openConversation({ ...key, thread: '300.1' });
    const long = `${'a'.repeat(5000)} needle ${'b'.repeat(5000)}`;
    await toolRun(conversation, 1, 'call_long', 'x', '{}', long, 'ok');
    const [hit] = await store.searchHistory(key, { text: 'needle', maxResults: 1 });
    expect(hit!.excerpt.length).toBeLessThanOrEqual(300);
    expect(hit!.excerpt).toContain('needle');
  });

  it('never returns another channel, DM or workspace, in any scope', async () => {
    for (const scope of [key, { ...key, channel: 'C-private' }, { ...key, channel: 'D-dm' }]) {
      const hits = await store.searchHistory(scope, { text: 'payroll', maxResults: 50 });
      expect(hits.length).toBe(scope === key ? 0 : 1);
    }
  });

  it('honours max_results, days and the excluded turn', async () => {
    expect(await store.searchHistory(key, { text: 'zebra', maxResults: 2 })).toHaveLength(2);
    await db.prisma.$executeRaw`UPDATE tool_results SET created_at = now() - interval '30 days' WHERE channel_key = ${JSON.stringify(['slack', key.workspace, key.channel])}`;
    const recent = await store.searchHistory(key, { text: 'zebra', maxResults: 10, days: 7 });
    expect(recent.map((h) => h.kind)).not.toContain('tool_result');
    const excluded = await store.searchHistory(key, { text: 'list_directory', maxResults: 10, excludeTurn: { conversationId: first.id, turn: 1 } });
    expect(excluded.filter((h) => h.kind === 'user')).toHaveLength(0);
  });
});
