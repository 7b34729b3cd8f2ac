import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcquiredLease, InboxEntry } from '../../src/core/ports/platform/delivery.ts';
import type { Conversation, Message } from '../../src/core/ports/conversation.ts';
import { LeaseLostError } from '../../src/core/ports/store.ts';
import type { Database } from '../../src/store/database.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { testDatabase, testStore, uniqueKey } from '../support/db.ts';

let db: Database;
let ledger: DeliveryLedger;
let store: TranscriptStore;

beforeAll(async () => {
  db = await testDatabase();
  ledger = new DeliveryLedger(db);
  store = testStore(db);
});
afterAll(() => db.close());

const record = async (): Promise<InboxEntry> =>
  (await ledger.record(
    {
      lane: uniqueKey(),
      messageKey: randomUUID(),
      kind: 'message',
      user: 'U1',
      text: 'hello',
      delivery: {},
    },
    false,
  ))!;

/** Holder A's lease ran out (1 ms), and holder B took the lane over: a generation later. */
async function takenOver(entry: InboxEntry): Promise<{ a: AcquiredLease; b: AcquiredLease }> {
  const a = (await ledger.acquire(entry.laneId, `a-${randomUUID()}`, 1))!;
  let b: AcquiredLease | undefined;
  // On the database's clock, not ours.
  await expect
    .poll(async () => (b = await ledger.acquire(entry.laneId, `b-${randomUUID()}`, 60_000)))
    .toMatchObject({ takenOver: true });
  expect(BigInt(b!.generation)).toBe(BigInt(a.generation) + 1n);
  return { a, b: b! };
}

const rowsOf = (conversation: Conversation) =>
  db.prisma.transcriptMessage.findMany({
    where: { conversationId: conversation.id },
    orderBy: { id: 'asc' },
    select: { role: true, content: true },
  });

describe('a holder whose lane was taken over', () => {
  it('writes no step, while the new holder’s steps written beside it land', async () => {
    const entry = await record();
    const { a, b } = await takenOver(entry);
    const { conversation } = await ledger.conversationFor(entry);
    const call = { id: `call_${randomUUID()}`, name: 'search', arguments: '{}' };
    const user: Message = { role: 'user', content: 'hello', turn: 1, inboxId: entry.id };
    const asked: Message = { role: 'assistant', content: '', toolCalls: [call], turn: 1 };
    await store.appendMessages(conversation, [user, asked], { fence: b });
    const result = { toolCallId: call.id, content: 'A found this', isError: false, durationMs: 1 };
    const [stale, fresh] = await Promise.allSettled([
      store.appendMessages(
        conversation,
        [{ role: 'tool', toolCallId: call.id, content: 'A found this', turn: 1 }],
        { fence: a, results: [result] },
      ),
      store.appendMessages(conversation, [{ role: 'assistant', content: 'B', turn: 2 }], {
        fence: b,
      }),
    ]);
    expect(stale).toMatchObject({ status: 'rejected', reason: expect.any(LeaseLostError) });
    expect(fresh).toMatchObject({ status: 'fulfilled' });
    await expect(
      store.appendMessages(conversation, [{ role: 'assistant', content: 'A', turn: 1 }], {
        fence: a,
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await rowsOf(conversation)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'B' },
    ]);
    expect(await db.prisma.toolResult.count({ where: { call: { toolCallId: call.id } } })).toBe(0);
  });

  it('saves no reply, claims no post and does not mark the message answered', async () => {
    const entry = await record();
    const { a, b } = await takenOver(entry);
    await expect(ledger.saveReply(entry.id, [{ text: 'from A' }], a)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await ledger.replyOf(entry.id)).toEqual([]);
    const [chunk] = await ledger.saveReply(entry.id, [{ text: 'from B' }], b);
    expect(chunk).toMatchObject({ text: 'from B' });
    await expect(ledger.claimPost(chunk!.id, a, 60_000)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(ledger.finish(entry.id, 'answered', a)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.nextPending(entry.laneId)).toMatchObject({ id: entry.id });
    // The new holder's go through; a chunk recorded as posted is not claimed again.
    expect(await ledger.claimPost(chunk!.id, b, 60_000)).toBe(true);
    await ledger.markPosted(chunk!.id, 'ts-b');
    expect(await ledger.claimPost(chunk!.id, b, 60_000)).toBe(false);
    await ledger.finish(entry.id, 'answered', b);
    expect(await ledger.nextPending(entry.laneId)).toBeUndefined();
    expect(await ledger.replyOf(entry.id)).toEqual([
      { id: chunk!.id, seq: 0, text: 'from B', platformMessageId: 'ts-b' },
    ]);
  });

  it('has its last post recorded, but not the message answered with it', async () => {
    const entry = await record();
    const { a, b } = await takenOver(entry);
    const [chunk] = await ledger.saveReply(entry.id, [{ text: 'from B' }], b);
    await expect(
      ledger.markPosted(chunk!.id, 'ts-a', { inboxId: entry.id, lease: a }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ledger.replyOf(entry.id)).toMatchObject([{ platformMessageId: 'ts-a' }]);
    expect(await ledger.nextPending(entry.laneId)).toMatchObject({ id: entry.id });
    expect(await ledger.markPosted(chunk!.id, 'ts-b', { inboxId: entry.id, lease: b })).toBe(true);
    expect(await ledger.nextPending(entry.laneId)).toBeUndefined();
    expect(await ledger.replyOf(entry.id)).toMatchObject([{ platformMessageId: 'ts-b' }]);
  });
});

describe('a reply saved under a lease', () => {
  it('extends it, as a claim does: a takeover after the save is refused until it runs out', async () => {
    const entry = await record();
    const lease = (await ledger.acquire(entry.laneId, `stalled-${randomUUID()}`, 1))!;
    await expect.poll(() => ledger.claimableLanes(['test'], 100_000)).toContain(entry.laneId);
    const [chunk] = await ledger.saveReply(
      entry.id,
      [{ text: 'saved after the stall' }],
      lease,
      60_000,
    );
    expect(chunk).toMatchObject({ seq: 0, text: 'saved after the stall' });
    expect(await ledger.claimableLanes(['test'], 100_000)).not.toContain(entry.laneId);
    expect(await ledger.acquire(entry.laneId, `b-${randomUUID()}`, 60_000)).toBeUndefined();
    expect(await ledger.markPosted(chunk!.id, 'ts-1', { inboxId: entry.id, lease })).toBe(true);
  });
});

describe("an answer's last post", () => {
  it('releases the lane with its message when nothing else waits in it, and only then', async () => {
    const lane = uniqueKey();
    const message = async (text: string) =>
      (await ledger.record(
        { lane, messageKey: randomUUID(), kind: 'message', user: 'U1', text, delivery: {} },
        false,
      ))!;
    const first = await message('one');
    const holder = `h-${randomUUID()}`;
    const lease = (await ledger.acquire(first.laneId, holder, 60_000))!;
    const second = await message('two');
    const answer = async (entry: InboxEntry, posted: string) => {
      const [chunk] = await ledger.saveReply(entry.id, [{ text: `re ${entry.text}` }], lease);
      return ledger.markPosted(chunk!.id, posted, { inboxId: entry.id, lease });
    };
    // Another message waits: the lane stays held, and its next message is the second.
    expect(await answer(first, 'ts-1')).toBe(false);
    expect(await ledger.acquire(first.laneId, `other-${randomUUID()}`, 60_000)).toBeUndefined();
    expect(await ledger.nextPending(first.laneId, holder)).toMatchObject({ id: second.id });
    // The last one: released with it. Another holder takes the lane at once, not over a live
    // lease, and the released one writes nothing more.
    expect(await answer(second, 'ts-2')).toBe(true);
    expect(await ledger.nextPending(first.laneId)).toBeUndefined();
    const next = await ledger.acquire(first.laneId, `other-${randomUUID()}`, 60_000);
    expect(next).toMatchObject({ takenOver: false });
    expect(BigInt(next!.generation)).toBe(BigInt(lease.generation) + 1n);
    await expect(ledger.finish(second.id, 'answered', lease)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
  });
});

describe('a transcript read under a lease', () => {
  it('is not read again under it: its steps join it as a read gives them back', async () => {
    const entry = await record();
    const holder = `h-${randomUUID()}`;
    const lease = (await ledger.acquire(entry.laneId, holder, 60_000))!;
    const { conversation } = await ledger.conversationFor(entry);
    expect(await store.loadTranscript(conversation, { fence: lease })).toEqual([]);
    const call = { id: `call_${randomUUID()}`, name: 'search', arguments: '{"q":1}' };
    const steps: Message[][] = [
      [
        { role: 'user', content: 'hello\u2028 there', turn: 1, inboxId: entry.id },
        { role: 'assistant', content: '', toolCalls: [call], turn: 1 },
      ],
      [{ role: 'tool', toolCallId: call.id, content: 'found', turn: 1 }],
      [{ role: 'assistant', content: 'done', turn: 1 }],
    ];
    for (const messages of steps)
      await store.appendMessages(conversation, messages, { fence: lease });
    const cached = await store.loadTranscript(conversation, { fence: lease });
    expect(cached).toStrictEqual(await testStore(db).loadTranscript(conversation));
    // A row no holder wrote (a test's own) shows that the lease's transcript was not read again;
    // a new acquisition reads what was written since, after what it holds.
    await testStore(db).appendMessages(conversation, [{ role: 'user', content: 'aside', turn: 2 }]);
    expect(await store.loadTranscript(conversation, { fence: lease })).toStrictEqual(cached);
    const again = (await ledger.acquire(entry.laneId, holder, 60_000))!;
    expect(await store.loadTranscript(conversation, { fence: again })).toStrictEqual([
      ...cached,
      { role: 'user', content: 'aside', turn: 2 },
    ]);
  });

  it('is not read at all when the conversation was created under it', async () => {
    const entry = await record();
    const lease = (await ledger.acquire(entry.laneId, `h-${randomUUID()}`, 60_000))!;
    const { conversation, fresh, created } = await ledger.conversationFor(entry);
    expect({ fresh, created }).toEqual({ fresh: true, created: true });
    // The test's own row, where no turn writes, shows that no read was made.
    await testStore(db).appendMessages(conversation, [{ role: 'user', content: 'aside', turn: 1 }]);
    expect(await store.loadTranscript(conversation, { fence: lease, created })).toEqual([]);
    // A conversation found at the lane's key is its thread's first, but not created now.
    const other = await record();
    const found = await store.openConversation(other.lane);
    expect(await ledger.conversationFor(other)).toEqual({
      conversation: found,
      fresh: true,
      created: false,
    });
  });

  it('is read again once this process wrote a step of it under another lease', async () => {
    const entry = await record();
    const holder = `h-${randomUUID()}`;
    const first = (await ledger.acquire(entry.laneId, holder, 60_000))!;
    const { conversation } = await ledger.conversationFor(entry);
    expect(await store.loadTranscript(conversation, { fence: first })).toEqual([]);
    const second = (await ledger.acquire(entry.laneId, holder, 60_000))!;
    await store.appendMessages(conversation, [{ role: 'user', content: 'B', turn: 1 }], {
      fence: second,
    });
    expect(await store.loadTranscript(conversation, { fence: first })).toEqual([
      { role: 'user', content: 'B', turn: 1 },
    ]);
  });
});

describe('a holder whose turns hold every connection of its pool', () => {
  it('renews its leases all the same, on the heartbeat’s own connection', async () => {
    const entry = await record();
    const holder = `busy-${randomUUID()}`;
    const lease = (await ledger.acquire(entry.laneId, holder, 60_000))!;
    // As a stalled database leaves them: every turn connection taken, none given back yet.
    const taken = await Promise.all(Array.from({ length: 4 }, () => db.pool.connect()));
    try {
      expect(db.pool.idleCount).toBe(0);
      expect(await ledger.renew(holder, [lease], 60_000)).toEqual([
        { laneId: entry.laneId, generation: lease.generation },
      ]);
    } finally {
      taken.forEach((client) => client.release());
    }
  });
});

describe('a holder whose lease ran out with no one taking the lane', () => {
  it('renews it and goes on writing: its generation is still the lane’s', async () => {
    const entry = await record();
    const holder = `stalled-${randomUUID()}`;
    const lease = (await ledger.acquire(entry.laneId, holder, 1))!;
    await expect.poll(() => ledger.claimableLanes(['test'], 100_000)).toContain(entry.laneId);
    expect(await ledger.renew(holder, [lease], 60_000)).toEqual([
      { laneId: entry.laneId, generation: lease.generation },
    ]);
    const { conversation } = await ledger.conversationFor(entry);
    await store.appendMessages(conversation, [{ role: 'user', content: 'kept', turn: 1 }], {
      fence: lease,
    });
    expect(await rowsOf(conversation)).toEqual([{ role: 'user', content: 'kept' }]);
    const [chunk] = await ledger.saveReply(entry.id, [{ text: 'kept' }], lease);
    expect(await ledger.claimPost(chunk!.id, lease, 60_000)).toBe(true);
  });

  it('extends it with the step it writes: a takeover after the write is refused', async () => {
    const entry = await record();
    const lease = (await ledger.acquire(entry.laneId, `stalled-${randomUUID()}`, 1))!;
    await expect.poll(() => ledger.claimableLanes(['test'], 100_000)).toContain(entry.laneId);
    const { conversation } = await ledger.conversationFor(entry);
    await new TranscriptStore(db, { leaseMs: 60_000 }).appendMessages(
      conversation,
      [{ role: 'user', content: 'asked after the stall', turn: 1 }],
      { fence: lease },
    );
    expect(await ledger.claimableLanes(['test'], 100_000)).not.toContain(entry.laneId);
    expect(await ledger.acquire(entry.laneId, `b-${randomUUID()}`, 60_000)).toBeUndefined();
  });
});
