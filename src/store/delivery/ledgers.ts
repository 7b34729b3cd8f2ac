import type { Database } from '../database.ts';
import { ApprovalLedger } from './approval-ledger.ts';
import { FeedbackLedger } from './feedback-ledger.ts';
import { QuestionLedger } from './question-ledger.ts';
import { ScheduleLedger } from './schedule-ledger.ts';
import { PostgresSpendLedger } from './spend-ledger.ts';

/** What the delivery engine keeps besides its inbox: approvals, questions, spend, ratings, schedules. */
export const deliveryLedgers = (db: Database) => ({
  approvals: new ApprovalLedger(db.prisma),
  questions: new QuestionLedger(db.prisma),
  spend: new PostgresSpendLedger(db.pool),
  feedback: new FeedbackLedger(db.prisma),
  schedules: new ScheduleLedger(db.prisma),
});
