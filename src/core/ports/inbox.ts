/**
 * The inbound pipeline's vocabulary and ports. A platform adapter turns its events into
 * `InboundMessage`s and implements `Outbound`; the store implements `InboxPort`.
 */
import type { Conversation, ConversationKey } from './conversation.ts';

/**
 * One lane: the place whose messages are answered one at a time, in arrival order (a Slack
 * thread, a Discord channel, a console session). Its key is a conversation key; the lane names
 * which conversation is current, since Discord's /new starts another in the same place.
 */
export type LaneKey = ConversationKey;

export type InboundKind = 'message' | 'new_conversation';

export interface InboundMessage {
  lane: LaneKey;
  /** The message itself, not one delivery of it: every retry and duplicate delivery shares it. */
  messageKey: string;
  kind: InboundKind;
  user: string;
  /** The sender's roles, where the platform has them (Discord). */
  roles?: string[];
  text: string;
  /** What a reply needs later, on any replica: Slack's ts, Discord's interaction token. */
  delivery: Record<string, string>;
  /** Only for a lane Spool already takes part in (a Slack follow-up without a mention). */
  knownLaneOnly?: boolean;
  /** Files shared with the message, as the platform listed them; fetched when its turn runs. */
  files?: InboundFile[];
}

/** A file as the platform listed it with a message. */
export interface InboundFile {
  name: string;
  mimeType?: string;
  /** As the platform declared it, before any download. */
  sizeBytes: number;
  /** Where the platform serves it. Only the adapter decides whether its credentials may go there. */
  url: string;
}

/** A file larger than allowed, found while it streamed in (its declared size was smaller). */
export class FileTooLargeError extends Error {
  override readonly name = 'FileTooLargeError';
}

/**
 * A message that could not be stored (the database is away). The platform must not be told that
 * it arrived: Slack then sends it again, and a Discord user is told to. The `code` is what Bolt
 * keeps of an error it hands to the app's error handler.
 */
export class NotRecordedError extends Error {
  override readonly name = 'NotRecordedError';
  readonly code = 'spool_not_recorded';
}

export interface InboxEntry extends InboundMessage {
  id: string;
  laneId: string;
  attempts: number;
}

/** A message due to be answered, with what its turn would otherwise ask the store for again. */
export interface PendingEntry extends InboxEntry {
  /** The lane's conversation, when it has one already. */
  conversation?: Conversation;
  /** An earlier attempt saved a reply (`replyOf` holds it). */
  replySaved: boolean;
}

/** A reply longer than a few messages, posted as one file. */
export interface ReplyFile {
  /** Unique to its reply, so that a file posted before a crash is recognised. */
  name: string;
  content: string;
  /** A code-only reply's language, for the platform's highlighting. */
  language?: string;
}

/** Approve and Deny buttons under a message, for one call that waits for a decision. */
export interface ApprovalButtons {
  toolCallId: string;
}

/** One message of a reply, with the file it carries, if any; or an approval prompt, with its buttons. */
export interface ReplyPart {
  text: string;
  file?: ReplyFile;
  approval?: ApprovalButtons;
}

export interface ReplyChunk extends ReplyPart {
  id: string;
  seq: number;
  /** Set once the platform accepted it. */
  platformMessageId?: string;
}

export interface InboxPort {
  /**
   * Stores the message, once: undefined when it is already stored (a retry, a duplicate
   * delivery) or when `knownLaneOnly` and its lane is unknown. A refused message joins no lane.
   */
  record(message: InboundMessage, refused: boolean): Promise<InboxEntry | undefined>;
  /** Lanes of these platforms with pending messages and no live lease. */
  claimableLanes(platforms: string[], limit: number): Promise<string[]>;
  acquire(laneId: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Extends every lease of `holder`; returns the lanes it still holds. */
  renew(holder: string, leaseMs: number): Promise<string[]>;
  release(laneId: string, holder: string): Promise<void>;
  /** The lane's oldest pending message, unless it waits for a retry. */
  nextPending(laneId: string): Promise<PendingEntry | undefined>;
  /** The lane's current conversation; `fresh` when it was created now. */
  conversationFor(entry: InboxEntry): Promise<{ conversation: Conversation; fresh: boolean }>;
  /** Points the lane at a new conversation. */
  startConversation(entry: InboxEntry): Promise<void>;
  replyOf(inboxId: string): Promise<ReplyChunk[]>;
  saveReply(inboxId: string, parts: ReplyPart[]): Promise<ReplyChunk[]>;
  /** The approval prompt of a call, stored once, before the reply's chunks (its seq is negative). */
  savePrompt(inboxId: string, prompt: ReplyPart & { approval: ApprovalButtons }): Promise<ReplyChunk>;
  markPosted(chunkId: string, platformMessageId: string): Promise<void>;
  finish(inboxId: string, status: 'answered' | 'failed'): Promise<void>;
  retryLater(inboxId: string, delayMs: number): Promise<void>;
}

/** One message to post: chunk `seq` of the reply to inbox row `inboxId` (none for a failure notice). */
export interface OutgoingChunk extends ReplyPart {
  inboxId?: string;
  seq: number;
}

/** What a platform does for the pipeline. */
export interface Outbound {
  /** The reply as the platform's messages, each within its size limit. */
  render(reply: string): string[];
  /** It posts a file with a message: a reply longer than a few messages goes as one file. */
  postsFiles?: boolean;
  /** Posts one chunk; returns the platform's id for it. */
  post(message: InboundMessage, chunk: OutgoingChunk): Promise<string>;
  /**
   * The platform id of a chunk that a crashed process may have posted without recording it, where
   * the platform can tell. A chunk it cannot find is posted.
   */
  findPosted?(message: InboundMessage, chunk: OutgoingChunk & { inboxId: string }): Promise<string | undefined>;
  /** Rewrites a posted message, without its buttons: an approval prompt, once decided. */
  edit?(message: InboundMessage, platformMessageId: string, chunk: OutgoingChunk): Promise<void>;
  /**
   * Asks the person at hand to approve a call, in place of a prompt with buttons (the console):
   * resolves with their answer, or a refusal saying why they cannot be asked.
   */
  askApproval?(message: InboundMessage, prompt: string): Promise<{ approved: boolean; note?: string }>;
  /** Tells the sender, privately, that Spool is not enabled for them here. */
  refuse(message: InboundMessage): Promise<void>;
  /**
   * Shows that Spool is working; resolves to the function that ends it, told whether a reply is
   * about to be posted (on some platforms a reply ends it by itself). Never throws.
   */
  showWorking(message: InboundMessage): Promise<(replyFollows: boolean) => Promise<void>>;
  /** What was said in the lane before Spool joined it, for a fresh conversation. */
  threadContext?(message: InboundMessage): Promise<string | undefined>;
  /**
   * The bytes of a file listed with `message`, at most `maxBytes` of them (FileTooLargeError past
   * that). Throws when the file cannot be fetched, or may not be with the platform's credentials.
   */
  fetchFile?(message: InboundMessage, file: InboundFile, maxBytes: number, signal: AbortSignal): Promise<Uint8Array>;
}

