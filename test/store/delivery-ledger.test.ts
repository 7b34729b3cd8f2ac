import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/core/ports/platform/delivery.ts';
import type { Database } from '../../src/store/database.ts';
import { renewLeases } from '../../src/store/leases.ts';
import { conversationAt } from '../../src/store/transcripts/conversations.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { testDatabase } from '../support/db.ts';
import { fileDatabaseUrl } from '../support/file-database.ts';
import { queryAt } from '../support/global-db.ts';
import { until } from '../support/process.ts';

let db: Database;
let ledger: DeliveryLedger;

beforeAll(async () => {
  db = await testDatabase();
  ledger = new DeliveryLedger(db);
});
afterAll(() => db.close());

function message(overrides: Partial<InboundMessage> = {}): InboundMessage {
  return {
    lane: { platform: 'test', workspace: `w-${randomUUID()}`, channel: 'c1', thread: 't1' },
    messageKey: randomUUID(),
    kind: 'message',
    user: 'U1',
    text: 'hello',
    delivery: { ts: '1.1' },
    ...overrides,
  };
}

describe('the inbox', () => {
  it('stores a message once, however many deliveries race for it', async () => {
    const m = message();
    const results = await Promise.all(Array.from({ length: 5 }, () => ledger.record(m, false)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await db.prisma.inboxEntry.count({ where: { messageKey: m.messageKey } })).toBe(1);
  });

  it('records messages arriving together each in its own row, in arrival order within a lane', async () => {
    const lanes = Array.from({ length: 30 }, () => message());
    // The first arrivals are written alone, a statement each while the database is idle; the
    // rest wait and share the next one. The ledger orders a lane's messages, and picks the first
    // of a message's deliveries, within a statement (across statements in flight together the
    // database's locks decide, which is why the intake records a lane's messages one at a time):
    // both arrivals of each pair are among the last ones.
    const [repeated, first] = [lanes.at(-2)!, lanes.at(-1)!];
    const known = first.lane;
    const arrivals: Array<[InboundMessage, boolean]> = [
      ...lanes.map((m): [InboundMessage, boolean] => [m, false]),
      [repeated, false],
      [message({ lane: known, text: 'second in its lane' }), false],
      [message({ lane: known, text: 'refused' }), true],
      [message({ knownLaneOnly: true }), false],
    ];
    const entries = await Promise.all(arrivals.map(([m, refused]) => ledger.record(m, refused)));
    for (const [i, m] of lanes.entries())
      expect(
        await db.prisma.inboxEntry.findUnique({ where: { id: BigInt(entries[i]!.id) } }),
      ).toMatchObject({
        messageKey: m.messageKey,
        text: m.text,
        laneId: BigInt(entries[i]!.laneId),
      });
    const [again, second, refused, unknown] = entries.slice(lanes.length);
    expect([again, unknown]).toEqual([undefined, undefined]);
    const firstEntry = entries[lanes.length - 1]!;
    expect(second).toMatchObject({ laneId: firstEntry.laneId, text: 'second in its lane' });
    expect(BigInt(second!.id)).toBeGreaterThan(BigInt(firstEntry.id));
    expect(
      await db.prisma.inboxEntry.findUnique({ where: { id: BigInt(refused!.id) } }),
    ).toMatchObject({ status: 'refused', laneId: null });
  });

  it('takes a follow-up only in a known lane, which its first message makes known', async () => {
    const first = message();
    expect(await ledger.record({ ...first, knownLaneOnly: true }, false)).toBeUndefined();
    expect(await ledger.record(first, false)).toBeDefined();
    const followUp = await ledger.record(message({ lane: first.lane, knownLaneOnly: true }), false);
    expect(followUp?.laneId).toBeTruthy();
  });

  it('keeps a refused message out of every lane, so it makes no thread known', async () => {
    const refused = message();
    const entry = await ledger.record(refused, true);
    expect(
      await db.prisma.inboxEntry.findUnique({ where: { id: BigInt(entry!.id) } }),
    ).toMatchObject({ status: 'refused', laneId: null });
    expect(
      await ledger.record(message({ lane: refused.lane, knownLaneOnly: true }), false),
    ).toBeUndefined();
  });

  it('hands out a lane in arrival order, holding back everything behind a message that waits for its retry', async () => {
    const lane = message().lane;
    const a = (await ledger.record(message({ lane, text: 'a' }), false))!;
    const b = (await ledger.record(message({ lane, text: 'b' }), false))!;
    expect((await ledger.nextPending(a.laneId))?.text).toBe('a');
    await ledger.retryLater(a.id, 60_000);
    expect(await ledger.nextPending(a.laneId)).toBeUndefined();
    await ledger.finish(a.id, 'answered');
    expect(await ledger.nextPending(b.laneId)).toMatchObject({ id: b.id, text: 'b', attempts: 0 });
  });

  it("hands out a message with its lane's conversation and whether a reply was saved, so its turn need not ask", async () => {
    const lane = message().lane;
    const a = (await ledger.record(message({ lane }), false))!;
    // The thread's first turn: the same statement links the lane to a new conversation at its key.
    const first = await ledger.nextPending(a.laneId);
    expect(first).toMatchObject({
      id: a.id,
      replySaved: false,
      conversation: lane,
      linked: { created: true },
    });
    const conversation = first!.conversation!;
    expect(await ledger.saveReply(a.id, [{ text: 'one' }, { text: 'two' }])).toMatchObject([
      { seq: 0, text: 'one' },
      { seq: 1, text: 'two' },
    ]);
    const again = await ledger.nextPending(a.laneId);
    expect(again).toMatchObject({ id: a.id, replySaved: true, conversation });
    expect(again?.linked).toBeUndefined();
    // A second attempt's reply does not replace the first one's.
    expect((await ledger.saveReply(a.id, [{ text: 'other' }])).map((c) => c.text)).toEqual([
      'one',
      'two',
    ]);
  });

  it('links a new thread to a conversation only for a message that runs a turn, and to the one at its key', async () => {
    const unlinked = async (m: InboundMessage, stop = false) => {
      const entry = (await ledger.record(m, false))!;
      if (stop) await ledger.requestStop(m.lane, 'U1');
      const next = await ledger.nextPending(entry.laneId);
      expect(next?.id).toBe(entry.id);
      expect(next?.conversation).toBeUndefined();
      // The next message's turn is still the thread's first.
      const [lane] = await db.prisma.$queryRaw<Array<{ conversation_id: string | null }>>`
        SELECT conversation_id::text FROM lanes WHERE id = ${BigInt(entry.laneId)}`;
      expect(lane).toEqual({ conversation_id: null });
    };
    // Nothing to read (whitespace as String.prototype.trim sees it), a greeting, a new
    // conversation, a stopped message.
    await unlinked(message({ text: ' \n\t\u00a0\u2003\u3000\ufeff' }));
    await unlinked(message({ kind: 'greeting' }));
    await unlinked(message({ kind: 'new_conversation' }));
    await unlinked(message(), true);
    // Files alone run a turn.
    const files = [{ name: 'a.txt', sizeBytes: 1, url: 'https://files.example/a.txt' }];
    const withFiles = (await ledger.record(message({ text: '', files }), false))!;
    expect(await ledger.nextPending(withFiles.laneId)).toMatchObject({ linked: { created: true } });
    // A conversation already at the lane's key is linked, not created.
    const lane = message().lane;
    const known = await conversationAt(db.prisma, lane);
    const entry = (await ledger.record(message({ lane }), false))!;
    expect(await ledger.nextPending(entry.laneId)).toMatchObject({
      conversation: known,
      linked: { created: false },
    });
  });

  it('prunes handled messages after the retention time, never pending ones', async () => {
    const lane = message().lane;
    const done = (await ledger.record(message({ lane }), false))!;
    const pending = (await ledger.record(message({ lane }), false))!;
    await ledger.saveReply(done.id, [{ text: 'reply' }]);
    await ledger.finish(done.id, 'answered');
    const longAgo = new Date(Date.now() - 8 * 86_400_000);
    await db.prisma.inboxEntry.updateMany({
      where: { id: { in: [BigInt(done.id), BigInt(pending.id)] } },
      data: { receivedAt: longAgo },
    });
    expect(await ledger.prune(7)).toBeGreaterThanOrEqual(1);
    expect(await db.prisma.inboxEntry.findUnique({ where: { id: BigInt(done.id) } })).toBeNull();
    expect(await db.prisma.outboxChunk.count({ where: { inboxId: BigInt(done.id) } })).toBe(0);
    expect(
      await db.prisma.inboxEntry.findUnique({ where: { id: BigInt(pending.id) } }),
    ).toMatchObject({ status: 'pending' });
  });
});

describe('lane leases', () => {
  it('are held by one replica until released or expired', async () => {
    const entry = (await ledger.record(message(), false))!;
    const a = await ledger.acquire(entry.laneId, 'replica-a', 60_000);
    expect(a).toMatchObject({ laneId: entry.laneId, takenOver: false });
    expect(await ledger.acquire(entry.laneId, 'replica-b', 60_000)).toBeUndefined();
    expect(await ledger.claimableLanes(['test'], 1_000)).not.toContain(entry.laneId);
    expect(await ledger.renew('replica-a', [a!], 60_000)).toEqual([
      { laneId: entry.laneId, generation: a!.generation },
    ]);
    await ledger.release(entry.laneId, 'replica-b');
    expect(await ledger.acquire(entry.laneId, 'replica-b', 60_000)).toBeUndefined();
    await ledger.release(entry.laneId, 'replica-a');
    expect(await ledger.claimableLanes(['test'], 1_000)).toContain(entry.laneId);
    // Each acquisition is a new generation.
    expect(await ledger.acquire(entry.laneId, 'replica-b', 60_000)).toEqual({
      laneId: entry.laneId,
      generation: String(BigInt(a!.generation) + 1n),
      takenOver: false,
    });
  });

  it('is taken over once the holder stops renewing it', async () => {
    const entry = (await ledger.record(message(), false))!;
    const dead = await ledger.acquire(entry.laneId, 'dead-replica', 1);
    expect(dead).toBeDefined();
    // The lease ran out 1 ms after it was taken; wait for the database's clock, not ours.
    await expect
      .poll(() => ledger.acquire(entry.laneId, 'replica-b', 60_000))
      .toMatchObject({ laneId: entry.laneId, takenOver: true });
    expect(await ledger.renew('dead-replica', [dead!], 60_000)).toEqual([]);
  });

  /**
   * A transaction of the test's own, left open: what a statement in it locks stays locked until
   * `end`. As a pool, it hands the statement its one connection.
   */
  async function openTransaction() {
    const client = new pg.Client({ connectionString: fileDatabaseUrl() });
    await client.connect();
    await client.query('BEGIN');
    const asPool = { connect: async () => Object.assign(client, { release() {} }) };
    return {
      client,
      pool: asPool as unknown as pg.Pool,
      end: () => client.query('ROLLBACK').finally(() => client.end()),
    };
  }

  /**
   * `work`'s outcome, or a failure as soon as a statement of this database waits for a lock
   * instead (the open transaction's).
   */
  async function unheld<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const settled = work.finally(() => (done = true));
    const held = await until(async () => {
      if (done) return 'no';
      const [row] = await queryAt<{ waiting: number }>(
        fileDatabaseUrl(),
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return row!.waiting > 0 ? 'yes' : undefined;
    });
    if (held === 'yes') {
      settled.catch(() => {});
      throw new Error('held up by the open transaction');
    }
    return settled;
  }

  // A heartbeat renews its leases (rows locked in id order) while arrivals are recorded in their
  // lanes; the arrivals' statement locked known lanes in its batch's order, the two deadlocked in a
  // burst, and the renewal failed while its leases ran out.
  it('records a message in a lane whose lease a renewal is renewing, without waiting for it', async () => {
    const first = (await ledger.record(message(), false))!;
    const lease = (await ledger.acquire(first.laneId, 'replica-a', 60_000))!;
    const renewal = await openTransaction();
    try {
      expect(await renewLeases(renewal.pool, 'replica-a', [lease], 60_000)).toHaveLength(1);
      const next = await unheld(ledger.record(message({ lane: first.lane }), false));
      expect(next?.laneId).toBe(first.laneId);
    } finally {
      await renewal.end();
    }
  });

  it('renews a lease while a message is being recorded in its lane', async () => {
    const first = (await ledger.record(message(), false))!;
    const lease = (await ledger.acquire(first.laneId, 'replica-a', 60_000))!;
    const arrival = await openTransaction();
    try {
      // The message's row refers to its lane: its key is locked against change until the end.
      await arrival.client.query(
        `INSERT INTO inbox (platform, message_key, lane_id, kind, user_id, text, delivery, status)
         VALUES ('test', $1, $2, 'message', 'U1', 'hello', '{}', 'pending')`,
        [randomUUID(), first.laneId],
      );
      expect(await unheld(ledger.renew('replica-a', [lease], 60_000))).toEqual([
        { laneId: lease.laneId, generation: lease.generation },
      ]);
    } finally {
      await arrival.end();
    }
  });

  it('keeps a reply once, with the platform id of each chunk posted', async () => {
    const entry = (await ledger.record(message(), false))!;
    const [first, second] = await ledger.saveReply(entry.id, [{ text: 'one' }, { text: 'two' }]);
    await ledger.markPosted(first!.id, 'ts-1');
    expect(await ledger.saveReply(entry.id, [{ text: 'other' }, { text: 'chunks' }])).toEqual([
      { id: first!.id, seq: 0, text: 'one', platformMessageId: 'ts-1' },
      { id: second!.id, seq: 1, text: 'two' },
    ]);
  });

  it("keeps a reply's links with the chunk that carries them, for a delivery resumed from the store", async () => {
    const entry = (await ledger.record(message(), false))!;
    const links = [
      { label: 'View the whole result', url: 'https://spool.test/web/results/call_a1' },
    ];
    const saved = await ledger.saveReply(entry.id, [{ text: 'one' }, { text: 'two', links }]);
    expect(saved.map((c) => c.links)).toEqual([undefined, links]);
    expect((await ledger.replyOf(entry.id)).map(({ text, links }) => ({ text, links }))).toEqual([
      { text: 'one', links: undefined },
      { text: 'two', links },
    ]);
  });

  it('puts messages in place of a refused file, once, however many attempts race to', async () => {
    const entry = (await ledger.record(message(), false))!;
    const [file] = await ledger.saveReply(entry.id, [
      {
        text: 'here is a file',
        file: { name: 'reply-1.md', content: 'long', language: 'markdown' },
      },
    ]);
    const parts = [{ text: 'long, part one' }, { text: 'part two' }];
    const replies = await Promise.all(
      Array.from({ length: 3 }, () => ledger.replaceFile(entry.id, file!.id, parts)),
    );
    for (const reply of replies)
      expect(reply.map(({ id, seq, text, file }) => ({ id, seq, text, file }))).toEqual([
        { id: file!.id, seq: 0, text: 'long, part one', file: undefined },
        { id: expect.any(String), seq: 1, text: 'part two', file: undefined },
      ]);
  });
});
