import { errorMessage } from '../../errors.ts';
import { NotRecordedError } from '../../ports/platform/delivery.ts';
import type { Delivery } from '../../ports/platform/platform.ts';
import { StoreError } from '../../ports/store.ts';
import { FAILURE_REPLY, NOT_RECORDED_REPLY } from '../posts/replies.ts';

/** To someone whose command (`/usage`, `/recall`, `/result`) could not be answered for now. */
export const DATABASE_AWAY_REPLY =
  'I cannot answer that right now: my database is not answering. Please try again in a minute.';

/**
 * How long a command waits for the database before the person is told it is not answering: a
 * server that accepts connections but never answers would otherwise keep them waiting for good.
 */
export const COMMAND_STORE_MS = 10_000;

/** What to tell a person whose command failed with `error`, in plain words. */
export function commandFailureReply(error: unknown): string {
  if (error instanceof NotRecordedError) return NOT_RECORDED_REPLY;
  if (error instanceof StoreError) return DATABASE_AWAY_REPLY;
  return FAILURE_REPLY;
}

/**
 * `read`'s answer; its failure, or no answer within `withinMs`, as a StoreError (`what` failed).
 * For what only reads the database: a late answer is dropped, nothing of it is half done.
 */
export async function storeRead<T>(
  what: string,
  read: () => Promise<T>,
  withinMs = COMMAND_STORE_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreError(`${what}: the database did not answer within ${withinMs} ms`)),
      withinMs,
    );
  });
  const answer = read().catch((error: unknown) => {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`${what}: ${errorMessage(error)}`, { cause: error });
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The delivery engine for an adapter's commands: `/recall`, `/result` and `/usage` read only the
 * database, so any failure of theirs, or an answer slower than `withinMs`, is a StoreError, which
 * `commandFailureReply` words for the person. Everything else is the engine's own.
 */
export function answeringCommands(delivery: Delivery, withinMs = COMMAND_STORE_MS): Delivery {
  return {
    register: (...args) => delivery.register(...args),
    handleIncoming: (...args) => delivery.handleIncoming(...args),
    recall: (...args) => storeRead('recall', () => delivery.recall(...args), withinMs),
    result: (...args) => storeRead('result', () => delivery.result(...args), withinMs),
    usage: (...args) => storeRead('usage', () => delivery.usage(...args), withinMs),
    logins: (...args) => storeRead('logins', () => delivery.logins(...args), withinMs),
    login: (...args) => delivery.login(...args),
    logout: (...args) => delivery.logout(...args),
    editIncoming: (...args) => delivery.editIncoming(...args),
    decideApproval: (...args) => delivery.decideApproval(...args),
    stopTurn: (...args) => delivery.stopTurn(...args),
    workspaceGone: (...args) => delivery.workspaceGone(...args),
    workspaceBack: (...args) => delivery.workspaceBack(...args),
    rateAnswer: (...args) => delivery.rateAnswer(...args),
    suggestedPrompts: (...args) => delivery.suggestedPrompts(...args),
    answerForm: (...args) => delivery.answerForm(...args),
    promptText: (...args) => delivery.promptText(...args),
    form: (...args) => delivery.form(...args),
    schedule: (...args) => delivery.schedule(...args),
  };
}

/**
 * `work`'s result; if it takes longer than `ms`, `slow` is called meanwhile (once), as a platform
 * that must hear within seconds is told "thinking" (Discord's deferral, due within 3 s).
 */
export async function sayingSlow<T>(
  work: Promise<T>,
  ms: number,
  slow: () => Promise<unknown>,
): Promise<T> {
  let slowed: Promise<unknown> | undefined;
  const timer = setTimeout(() => (slowed = slow()), ms);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
    await slowed;
  }
}
