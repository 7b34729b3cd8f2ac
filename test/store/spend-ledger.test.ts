import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnSpend } from '../../src/core/delivery/rules/spend.ts';
import type { CapScope, Spender } from '../../src/core/ports/spend.ts';
import type { Database } from '../../src/store/database.ts';
import { PostgresSpendLedger } from '../../src/store/delivery/spend-ledger.ts';
import type { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { testDatabase, testStore, uniqueKey } from '../support/db.ts';

/** Two replicas: each its own connections to the one database, its own ledger and store. */
let replicas: Array<{ db: Database; ledger: PostgresSpendLedger; store: TranscriptStore }>;

beforeAll(async () => {
  replicas = await Promise.all(
    [0, 1].map(async () => {
      const db = await testDatabase();
      return { db, ledger: new PostgresSpendLedger(db.pool), store: testStore(db) };
    }),
  );
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.db.close()));
});

const later = () => new Date(Date.now() + 60_000);
const dayStart = () => new Date(new Date().toISOString().slice(0, 10));

describe('PostgresSpendLedger', () => {
  it('never lets 20 threads on two replicas pass a cap by more than one request', async () => {
    const key = uniqueKey({ platform: 'slack' });
    const spender: Spender = { ...key, user: 'U1' };
    const limit = 5_000;
    const scope: CapScope = {
      platform: key.platform,
      workspace: key.workspace,
      channel: key.channel,
      unit: 'tokens',
      since: dayStart(),
      limit,
    };
    const biggest = { tokens: 0 };
    let refused = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, thread) => {
        const { ledger, store } = replicas[thread % 2]!;
        const conversation = await store.openConversation({ ...key, thread: `t${thread}` });
        for (let request = 0; ; request++) {
          // What a request may cost is held; what it costs is at most that.
          const most = 300 + ((thread * 7 + request * 13) % 200);
          const admission = await ledger.admit(spender, [scope], { tokens: most }, later());
          if (!admission.admitted) {
            refused++;
            // What the gate counted: spent, and what requests in flight held.
            expect(admission.spent + admission.held!).toBeGreaterThanOrEqual(limit);
            return;
          }
          const used = most - ((thread + request) % 50);
          biggest.tokens = Math.max(biggest.tokens, used);
          await new Promise((resolve) => setTimeout(resolve, (thread * 3) % 17));
          await store.appendMessages(conversation, [], {
            usage: {
              model: 'm',
              promptTokens: used - 10,
              completionTokens: 10,
              totalTokens: used,
              user: 'U1',
              holdId: admission.holdId,
            },
          });
        }
      }),
    );
    const { db } = replicas[0]!;
    const spent = await db.prisma.llmUsage.aggregate({
      where: { platform: key.platform, workspace: key.workspace, channel: key.channel },
      _sum: { totalTokens: true },
    });
    expect(refused).toBe(20);
    expect(spent._sum.totalTokens).toBeGreaterThanOrEqual(limit);
    expect(spent._sum.totalTokens! - limit).toBeLessThanOrEqual(biggest.tokens);
    // Each stored usage released its hold in the same write.
    expect(await db.prisma.spendHold.count({ where: { channel: key.channel } })).toBe(0);
  });

  it('counts a person across channels, in money, and forgets an expired hold', async () => {
    const key = uniqueKey({ platform: 'discord' });
    const { ledger, db } = replicas[0]!;
    const scope: CapScope = {
      platform: key.platform,
      workspace: key.workspace,
      user: 'U9',
      unit: 'cost',
      since: dayStart(),
      limit: 1,
    };
    const first = await ledger.admit(
      { ...key, user: 'U9' },
      [scope],
      { tokens: 10, cost: 0.6 },
      later(),
    );
    expect(first.admitted).toBe(true);
    // Another channel, the same person: the first hold counts, and 0.6 is under 1.
    const second = await ledger.admit(
      { ...key, channel: 'other', user: 'U9' },
      [scope],
      { tokens: 10, cost: 0.6 },
      new Date(Date.now() - 1),
    );
    expect(second.admitted).toBe(true);
    // 1.2 held, but the second hold has expired: 0.6 counts.
    const third = await ledger.admit({ ...key, user: 'U9' }, [scope], { tokens: 10 }, later());
    expect(third.admitted).toBe(true);
    if (first.admitted) await ledger.release(first.holdId);
    const conversation = await testStore(db).openConversation({ ...key, thread: 't' });
    await testStore(db).appendMessages(conversation, [], {
      usage: {
        model: 'm',
        promptTokens: 1,
        completionTokens: 1,
        totalTokens: 2,
        user: 'U9',
        cost: 1.5,
      },
    });
    expect(await ledger.admit({ ...key, user: 'U9' }, [scope], { tokens: 1 }, later())).toEqual({
      admitted: false,
      at: 0,
      spent: 1.5,
      held: 0,
    });
    expect(
      await ledger.usage({ platform: key.platform, workspace: key.workspace, since: dayStart() }),
    ).toEqual([
      {
        day: new Date().toISOString().slice(0, 10),
        channel: key.channel,
        user: 'U9',
        model: 'm',
        tokens: 2,
        cost: 1.5,
        unpriced: 0,
      },
    ]);
  });

  /** Tokens held against one channel, by row. */
  const holdsIn = async (db: Database, channel: string, workspace: string) =>
    (
      await db.prisma.spendHold.findMany({ where: { channel, workspace }, orderBy: { id: 'asc' } })
    ).map((h) => h.tokens);

  it('holds a turn whole: its first request reserves the rest, its later ones draw on it, and its end releases all, usage or none', async () => {
    const key = uniqueKey({ platform: 'slack' });
    const { db, store } = replicas[0]!;
    const policy = { caps: [{ per: 'channel' as const, period: 'day' as const, tokens: 100_000 }] };
    const spend = turnSpend({ ...key, user: 'U1' }, policy, replicas[0]!.ledger);
    const first = await spend.admit!(undefined, 1_000);
    if (!('holdId' in first)) throw new Error(first.refusal);
    // The request's hold, and the turn's reserve beside it.
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([1_000, 2_000]);
    // Its response carried no usage: the hold goes with the request.
    await spend.release!(first.holdId);
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([2_000]);
    // The next request's hold comes out of the reserve; its usage write releases the hold.
    const second = await spend.admit!(undefined, 1_500);
    if (!('holdId' in second)) throw new Error(second.refusal);
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([500, 1_500]);
    const conversation = await store.openConversation(key);
    await store.appendMessages(conversation, [], {
      usage: {
        model: 'm',
        promptTokens: 600,
        completionTokens: 40,
        totalTokens: 640,
        user: 'U1',
        holdId: second.holdId,
      },
    });
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([500]);
    // A third request outgrows the reserve: it stays at nothing, and the request still goes.
    const third = await spend.admit!(undefined, 900);
    expect(third).toHaveProperty('holdId');
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([0, 900]);
    // The turn ends with the third request's write never made: nothing of it is left.
    await spend.end!();
    expect(await holdsIn(db, key.channel, key.workspace)).toEqual([]);
  });

  it('names what was spent in the cap message, not what requests in flight hold', async () => {
    const key = uniqueKey({ platform: 'slack' });
    const { store } = replicas[0]!;
    const spender = { ...key, user: 'U1' };
    const policy = { caps: [{ per: 'channel' as const, period: 'day' as const, tokens: 3_000 }] };
    const conversation = await store.openConversation(key);
    await store.appendMessages(conversation, [], {
      usage: {
        model: 'm',
        promptTokens: 2_000,
        completionTokens: 700,
        totalTokens: 2_700,
        user: 'U1',
      },
    });
    // Another turn under way holds 200 of the 300 left.
    const other = turnSpend(spender, policy, replicas[1]!.ledger);
    expect(await other.admit!(undefined, 100)).toHaveProperty('holdId');
    const refused = await turnSpend(spender, policy, replicas[0]!.ledger).admit!(undefined, 100);
    expect(refused).toEqual({
      refusal: expect.stringMatching(
        /^This channel has too little left of its cap of 3,000 tokens a day for another answer now \(2,700 tokens used; answers under way hold 300 tokens more\)\. Try again once they finish, or after it resets at 00:00 UTC, in /,
      ),
    });
    // Once that turn ends, the rest is there again; once spent, the message names the spent only.
    await other.end!();
    const last = turnSpend(spender, policy, replicas[0]!.ledger);
    const admitted = await last.admit!(undefined, 100);
    if (!('holdId' in admitted)) throw new Error(admitted.refusal);
    await store.appendMessages(conversation, [], {
      usage: {
        model: 'm',
        promptTokens: 300,
        completionTokens: 50,
        totalTokens: 350,
        user: 'U1',
        holdId: admitted.holdId,
      },
    });
    expect(await last.admit!(undefined, 100)).toEqual({
      refusal: expect.stringMatching(
        /^This channel has reached its cap of 3,000 tokens a day \(3,050 tokens used\)\. It resets/,
      ),
    });
    await last.end!();
  });

  it('admits ten turns at once on two replicas whole or not at all: none is stopped half-way', async () => {
    const key = uniqueKey({ platform: 'slack' });
    const { db } = replicas[0]!;
    const most = 1_000;
    /** Three turns' worth: each holds three requests at their most. */
    const limit = 3 * 3 * most;
    const policy = { caps: [{ per: 'channel' as const, period: 'day' as const, tokens: limit }] };
    const firsts: Array<Promise<unknown>> = [];
    let started!: () => void;
    const allAsked = new Promise<void>((resolve) => (started = resolve));
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, async (_, n) => {
        const { ledger, store } = replicas[n % 2]!;
        const spend = turnSpend({ ...key, user: `U${n}` }, policy, ledger);
        const conversation = await store.openConversation({ ...key, thread: `t${n}` });
        try {
          for (let request = 0; request < 3; request++) {
            const asked = spend.admit!(undefined, most);
            if (request === 0) {
              firsts.push(asked);
              if (firsts.length === 10) void Promise.allSettled(firsts).then(() => started());
              // Every turn asks before any goes on: they all come at once.
              await allAsked;
            }
            const admitted = await asked;
            if ('refusal' in admitted) return { requests: request, refusal: admitted.refusal };
            await store.appendMessages(conversation, [], {
              usage: {
                model: 'm',
                promptTokens: most / 2,
                completionTokens: 100,
                totalTokens: most / 2 + 100,
                user: `U${n}`,
                holdId: admitted.holdId,
              },
            });
          }
          return { requests: 3 };
        } finally {
          await spend.end!();
        }
      }),
    );
    const whole = outcomes.filter((o) => o.requests === 3);
    const refused = outcomes.filter((o) => o.requests === 0);
    expect(whole).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const { refusal } of refused)
      expect(refusal).toMatch(/\(0 tokens used; answers under way hold 9,000 tokens more\)/);
    const spent = await db.prisma.llmUsage.aggregate({
      where: { workspace: key.workspace },
      _sum: { totalTokens: true },
    });
    expect(spent._sum.totalTokens).toBe(3 * 3 * (most / 2 + 100));
    expect(await db.prisma.spendHold.count({ where: { workspace: key.workspace } })).toBe(0);
  });
});
