import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapScope, Spender } from '../../src/core/ports/spend.ts';
import type { Database } from '../../src/store/database.ts';
import { PostgresSpendLedger } from '../../src/store/spend-ledger.ts';
import type { TranscriptStore } from '../../src/store/transcript-store.ts';
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
            expect(admission.spent).toBeGreaterThanOrEqual(limit);
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
    });
    expect(
      await ledger.usage({ platform: key.platform, workspace: key.workspace, since: dayStart() }),
    ).toEqual([
      {
        day: new Date().toISOString().slice(0, 10),
        channel: key.channel,
        user: 'U9',
        tokens: 2,
        cost: 1.5,
        unpriced: 0,
      },
    ]);
  });
});
