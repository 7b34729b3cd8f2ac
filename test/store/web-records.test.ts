import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { WebRecords } from '../../src/store/transcripts/web-records.ts';
import { testDatabase, testStore, uniqueKey } from '../support/db.ts';

let db: Database;

beforeAll(async () => {
  db = await testDatabase();
});
afterAll(() => db.close());

it("shows a person's message at when it arrived, before the answer stored with it", async () => {
  const ledger = new DeliveryLedger(db);
  const lane = uniqueKey();
  const entry = (await ledger.record(
    { lane, messageKey: randomUUID(), kind: 'message', user: 'U1', text: 'hello', delivery: {} },
    false,
  ))!;
  // Its turn's first step came a minute after it arrived: the model took that long.
  await db.prisma
    .$executeRaw`UPDATE inbox SET received_at = now() - interval '1 minute' WHERE id = ${BigInt(entry.id)}`;
  const { conversation } = await ledger.conversationFor(entry);
  await testStore(db).appendMessages(conversation, [
    { role: 'user', content: 'hello', turn: 1, inboxId: entry.id },
    { role: 'assistant', content: 'hi there', turn: 1 },
  ]);
  const { receivedAt } = await db.prisma.inboxEntry.findUniqueOrThrow({
    where: { id: BigInt(entry.id) },
  });
  const record = await new WebRecords(db.prisma).conversation(conversation.id);
  expect(record!.entries.filter((e) => e.kind === 'message')).toMatchObject([
    { role: 'user', content: 'hello', person: 'U1', at: receivedAt },
    { role: 'assistant', content: 'hi there' },
  ]);
  const [asked, answered] = record!.entries;
  expect(asked!.at.getTime()).toBeLessThan(answered!.at.getTime());
});
