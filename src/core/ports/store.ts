import type { Conversation, ConversationKey, Message } from './conversation.ts';
import type { LlmUsage } from './llm.ts';
import type { BinaryPart } from './tools.ts';
import { errorMessage } from '../errors.ts';

/** The transcript store port: Prisma implements it (src/store). */

export interface ToolResultRecord {
  toolCallId: string;
  /** The full, untruncated result. */
  content: string;
  isError: boolean;
  durationMs: number;
  binaries?: BinaryPart[];
}

/**
 * What a step writes besides its messages: the results its tool calls returned, the model call's
 * usage.
 */
export interface StepRecords {
  results?: ToolResultRecord[];
  usage?: UsageRecord;
  /**
   * The lease the step is written under: the write is refused (LeaseLostError) once another
   * acquisition of the lane made it stale.
   */
  fence?: Lease;
}

/**
 * One acquisition of a lane (see `DeliveryPort.acquire`): its generation is the fencing token.
 * Every acquisition bumps it, so the writes that advance the lane's work name the one they were
 * made under, and the database refuses them once another holder has taken the lane.
 */
export interface Lease {
  laneId: string;
  generation: string;
}

/** A model request's usage as stored: whose it was, its price, and the hold its write releases. */
export interface UsageRecord extends LlmUsage {
  user?: string;
  /** Unknown for a model without a price. */
  cost?: number;
  holdId?: string;
}

export interface StorePort {
  /** Finds or creates the conversation for a platform location. */
  openConversation(key: ConversationKey): Promise<Conversation>;
  /**
   * Under a lease (`held.fence`), the transcript may come from what this process read and wrote
   * under it, without a read: no other holder can have written to it meanwhile. Nor is a
   * conversation created under it (`held.created`) read: nothing was stored in it before.
   */
  loadTranscript(
    conversation: Conversation,
    held?: { fence: Lease; created?: boolean },
  ): Promise<Message[]>;
  /**
   * Appends one step, in order, atomically; durable when it resolves. An assistant message's tool
   * calls are recorded with it, so every call is stored before it runs.
   */
  appendMessages(
    conversation: Conversation,
    messages: Message[],
    records?: StepRecords,
  ): Promise<void>;
  /**
   * The full text of a stored result: this conversation's first, then the newest in the same
   * channel (search_history hands out ids from sibling threads).
   */
  readToolResult(conversation: Conversation, toolCallId: string): Promise<string | undefined>;
}

/**
 * The store failed (the database is away, most often): nothing is known to be wrong with the
 * turn, it only cannot be made durable now. It is not answered with a failure: the message is
 * tried again from what was stored, as the delivery pipeline retries any failure. An outage
 * spends none of its attempts, since nothing can be written while it lasts.
 */
export class StoreError extends Error {
  override readonly name: string = 'StoreError';
}

/**
 * The database could not be reached: the write was never sent, so it can be made again as it is.
 */
export class StoreUnavailableError extends StoreError {
  override readonly name = 'StoreUnavailableError';
}

/**
 * A write made under a lease that another holder has since taken (see `Lease`): refused, nothing
 * of it stored. The work is the new holder's now; this one stops it and posts nothing.
 */
export class LeaseLostError extends StoreError {
  override readonly name = 'LeaseLostError';
}

/** The store with its failures typed as StoreError, whatever the adapter behind it throws. */
export function typedStoreErrors(store: StorePort): StorePort {
  const typed =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      method.apply(store, args).catch((error: unknown) => {
        if (error instanceof StoreError) throw error;
        throw new StoreError(`the store failed: ${errorMessage(error)}`, { cause: error });
      });
  return {
    openConversation: typed(store.openConversation),
    loadTranscript: typed(store.loadTranscript),
    appendMessages: typed(store.appendMessages),
    readToolResult: typed(store.readToolResult),
  };
}
