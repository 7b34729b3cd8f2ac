import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { TurnRunner } from '../../src/core/ports/turns.ts';
import { fileReader } from '../../src/files/file-reader.ts';
import {
  DeliveryEngine,
  type DeliveryDeps,
  type DeliveryOptions,
} from '../../src/core/delivery/engine/engine.ts';
import type { ConversationKey } from '../../src/core/ports/conversation.ts';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { ApprovalLedger } from '../../src/store/delivery/approval-ledger.ts';
import { FeedbackLedger } from '../../src/store/delivery/feedback-ledger.ts';
import { PostgresSpendLedger } from '../../src/store/delivery/spend-ledger.ts';
import { QuestionLedger } from '../../src/store/delivery/question-ledger.ts';
import { DeliveryLedger } from '../../src/store/delivery/delivery-ledger.ts';
import { HistorySearch } from '../../src/store/transcripts/history-search.ts';
import { ResultIndexer } from '../../src/store/transcripts/result-index.ts';
import { TranscriptStore } from '../../src/store/transcripts/transcript-store.ts';
import { createScratchDatabase } from './global-db.ts';
import { silentLogger } from './logger.ts';
import { fileDatabaseUrl, serverDatabaseUrl } from './file-database.ts';

export const databaseKind = () => inject('databaseKind');

/** This test file's database (see file-database.ts), migrated already. */
export async function testDatabase(): Promise<Database> {
  return openDatabase({
    databaseUrl: fileDatabaseUrl(),
    dataDir: '',
    logger: silentLogger,
    poolSize: 4,
  });
}

export function testStore(db: Database): TranscriptStore {
  return new TranscriptStore(db);
}

export const testSearch = (db: Database): HistorySearch =>
  new HistorySearch(db.prisma, new ResultIndexer(db, silentLogger));

/**
 * An empty database on the server of the run's kind, beside the files' databases (the embedded
 * server of the run, or the PostgreSQL server); drop it after. A database, not a server of its own:
 * a fresh embedded server cost an initdb, a start and a stop for each.
 */
export const scratchDatabase = (prefix: string): Promise<{ url: string; drop(): Promise<void> }> =>
  createScratchDatabase(prefix, serverDatabaseUrl('postgres'));

/** A conversation key no other test uses, so tests can share one database. */
export function uniqueKey(overrides: Partial<ConversationKey> = {}): ConversationKey {
  return {
    platform: 'test',
    workspace: `w-${randomUUID()}`,
    channel: 'c1',
    thread: 't1',
    ...overrides,
  };
}

/**
 * The inbound pipeline over the test database, quick to take over lanes; stop it after the test.
 */
export function testEngine(
  db: Database,
  agent: TurnRunner,
  options: Partial<DeliveryOptions> = {},
  deps: Partial<DeliveryDeps> = {},
): DeliveryEngine {
  return new DeliveryEngine(
    {
      agent,
      ledger: new DeliveryLedger(db),
      search: testSearch(db),
      files: fileReader({ binaryMaxBytes: 1_000_000 }),
      approvals: new ApprovalLedger(db.prisma),
      questions: new QuestionLedger(db.prisma),
      spend: new PostgresSpendLedger(db.pool),
      feedback: new FeedbackLedger(db.prisma),
      logger: silentLogger,
      ...deps,
    },
    {
      holder: `test-${randomUUID()}`,
      leaseMs: 3_000,
      pollMs: 200,
      maxAttempts: 3,
      files: { maxBytes: 1_000_000, maxPerMessage: 3 },
      replyFileChars: 8_000,
      approvalTimeoutMs: 600_000,
      questionTimeoutMs: 600_000,
      ...options,
    },
  );
}
