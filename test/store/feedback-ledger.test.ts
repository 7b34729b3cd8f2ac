import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { FeedbackLedger } from '../../src/store/delivery/feedback-ledger.ts';
import { testDatabase } from '../support/db.ts';

let db: Database;
let inbox: DeliveryLedger;
let feedback: FeedbackLedger;

beforeAll(async () => {
  db = await testDatabase();
  inbox = new DeliveryLedger(db);
  feedback = new FeedbackLedger(db.prisma);
});
afterAll(() => db.close());

/** A message of `asker` recorded in a workspace of its own; its answer is what is rated. */
async function answered(asker = 'U1') {
  const lane = { platform: 'slack', workspace: `T-${randomUUID()}`, channel: 'C1', thread: '1.1' };
  const entry = await inbox.record(
    { lane, messageKey: randomUUID(), kind: 'message', user: asker, text: 'q', delivery: {} },
    false,
  );
  const { platform, workspace, channel } = lane;
  return { inboxId: entry!.id, scope: { platform, workspace, channel } };
}

describe('ratings of answers', () => {
  it('keeps one rating per person per answer when clicks race; a later click replaces it, and a reason stays with its 👎 only', async () => {
    const { inboxId, scope } = await answered();
    const clicks = ['up', 'down', 'up', 'down', 'up'] as const;
    const outcomes = await Promise.all(
      clicks.map((rating) => feedback.rate({ scope, inboxId, user: 'U2', rating })),
    );
    expect(outcomes).toEqual(clicks.map(() => 'recorded'));
    const rows = () => db.prisma.answerFeedback.findMany({ where: { inboxId: BigInt(inboxId) } });
    expect(await rows()).toHaveLength(1);
    await feedback.rate({ scope, inboxId, user: 'U2', rating: 'down', reason: 'wrong host' });
    await feedback.rate({ scope, inboxId, user: 'U2', rating: 'down' });
    expect(await rows()).toMatchObject([{ rating: 'down', reason: 'wrong host', askedBy: 'U1' }]);
    await feedback.rate({ scope, inboxId, user: 'U2', rating: 'up' });
    expect(await rows()).toMatchObject([{ rating: 'up', reason: null }]);
  });

  it('refuses a rating of an answer in another place, or of no answer, and tallies by who asked', async () => {
    const { inboxId, scope } = await answered('U1');
    const other = await answered('U3');
    const elsewhere = { ...scope, channel: 'C2' };
    expect(await feedback.rate({ scope: elsewhere, inboxId, user: 'U2', rating: 'up' })).toBe(
      'unknown',
    );
    expect(await feedback.rate({ scope, inboxId: '999999999', user: 'U2', rating: 'up' })).toBe(
      'unknown',
    );
    await feedback.rate({ scope, inboxId, user: 'U2', rating: 'up' });
    await feedback.rate({ scope, inboxId, user: 'U4', rating: 'down' });
    await feedback.rate({ scope: other.scope, inboxId: other.inboxId, user: 'U2', rating: 'up' });
    const since = new Date(Date.now() - 60_000);
    const query = { platform: 'slack', workspace: scope.workspace, since };
    expect(await feedback.tally(query)).toEqual({ up: 1, down: 1 });
    expect(await feedback.tally({ ...query, askedBy: 'U1' })).toEqual({ up: 1, down: 1 });
    expect(await feedback.tally({ ...query, askedBy: 'U2' })).toEqual({ up: 0, down: 0 });
    expect(await feedback.tally({ ...query, since: new Date(Date.now() + 60_000) })).toEqual({
      up: 0,
      down: 0,
    });
  });
});
