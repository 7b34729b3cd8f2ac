import type { FormRequest } from '../parked/forms.ts';
import type { Lease } from '../store.ts';
/**
 * The inbound pipeline's vocabulary and ports. A platform adapter turns its events into
 * `InboundMessage`s and implements `Outbound`; the store implements `DeliveryPort`.
 */
import type { Conversation, ConversationKey } from '../conversation.ts';

/**
 * One lane: the place whose messages are answered one at a time, in arrival order (a Slack
 * thread, a Discord channel, a console session). Its key is a conversation key; the lane names
 * which conversation is current, since Discord's /new starts another in the same place.
 */
export type LaneKey = ConversationKey;

/** `greeting`: a person opened Spool's agent view (Slack's assistant thread): Spool greets them. */
export type InboundKind = 'message' | 'new_conversation' | 'greeting';

export interface InboundMessage {
  lane: LaneKey;
  /** The message itself, not one delivery of it: every retry and duplicate delivery shares it. */
  messageKey: string;
  kind: InboundKind;
  user: string;
  /**
   * Sent by an app (a bot, a workflow), not a person: answered only where the channel's policy says
   * so.
   */
  fromApp?: boolean;
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
  /**
   * Where the platform serves it; absent where the platform lists a file without it (Slack
   * Connect), and the adapter looks it up by `id`. Only the adapter decides whether its
   * credentials may go there.
   */
  url?: string;
  /** The platform's id of the file. */
  id?: string;
}

/** A file larger than allowed, found while it streamed in (its declared size was smaller). */
export class FileTooLargeError extends Error {
  override readonly name = 'FileTooLargeError';
}

/**
 * The platform refused a reply's file for good (a missing scope, uploads turned off, too large):
 * the reply is posted as messages instead. The message is the platform's reason.
 */
export class FileRefusedError extends Error {
  override readonly name = 'FileRefusedError';
}

/**
 * The platform will not let Spool post in the channel any more (it left it, or the channel is
 * gone): what was to run there pauses. The message is the platform's reason.
 */
export class ChannelGoneError extends Error {
  override readonly name = 'ChannelGoneError';
}

/**
 * A message that could not be stored (the database is away). The platform must not be told that
 * it arrived: Slack then sends it again, and a Discord user is told to. The `code` is what Bolt
 * keeps of an error it hands to the app's error handler.
 */
export class NotRecordedError extends Error {
  static readonly CODE = 'spool_not_recorded';
  override readonly name = 'NotRecordedError';
  readonly code = NotRecordedError.CODE;
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
  /**
   * The lane had no conversation: it was linked to `conversation` as the message was taken up (its
   * thread's first turn, what `conversationFor` calls fresh); `created` when that did not exist
   * before either.
   */
  linked?: { created: boolean };
  /** An earlier attempt saved a reply (`replyOf` holds it). */
  replySaved: boolean;
  /** Its turn was stopped before this attempt took it up: by a person, or by an edit. */
  stopped?: StopKind;
}

/** `stop`: a person's Stop (a note is posted). `superseded`: an edit or a deletion (nothing is). */
export type StopKind = 'stop' | 'superseded';

/** A person's edit of a message Spool recorded, or its deletion (no `text`). */
export interface InboundEdit {
  lane: LaneKey;
  /** The edited message's own key. */
  messageKey: string;
  /**
   * Who made the edit or the deletion: only the author's edit counts. None for a deletion where the
   * platform does not say who made it (Discord's; only the author or a moderator can): the message
   * is gone for everyone.
   */
  user?: string;
  text?: string;
  /** The edit itself, for the message its text becomes: every delivery of the edit shares it. */
  editKey: string;
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

/** A tool's question under a message: its fields, with Submit, Decline and Cancel. */
export interface FormButtons {
  questionId: string;
  request: FormRequest;
}

/** A page to open in a browser, under a message: a link button where the platform has one. */
export interface ReplyLink {
  label: string;
  url: string;
}

/**
 * One message of a reply, with the file it carries, if any, and links to open (the whole results
 * its turn previewed); or a prompt, with its buttons: an approval's, or a question's form.
 */
export interface ReplyPart {
  text: string;
  file?: ReplyFile;
  links?: ReplyLink[];
  approval?: ApprovalButtons;
  form?: FormButtons;
}

export interface ReplyChunk extends ReplyPart {
  id: string;
  seq: number;
  /** Set once the platform accepted it. */
  platformMessageId?: string;
}

/** A lease just taken. */
export interface AcquiredLease extends Lease {
  /**
   * It was taken from a holder whose lease had run out (a crash, or a stall past the lease), not
   * from a free lane.
   */
  takenOver: boolean;
}

export interface DeliveryPort {
  /**
   * Stores the message, once: undefined when it is already stored (a retry, a duplicate
   * delivery) or when `knownLaneOnly` and its lane is unknown. A refused message joins no lane.
   */
  record(message: InboundMessage, refused: boolean): Promise<InboxEntry | undefined>;
  /** Lanes of these platforms with pending messages and no live lease. */
  claimableLanes(platforms: string[], limit: number): Promise<string[]>;
  /**
   * Takes the lane's lease, when it is free, expired or `holder`'s already: a new generation, or
   * undefined when another holder has it.
   */
  acquire(laneId: string, holder: string, leaseMs: number): Promise<AcquiredLease | undefined>;
  /**
   * Extends these leases of `holder`, each only while its generation is still the lane's; returns
   * those it extended. A lease absent from the answer was taken over (or released): its work is
   * lost. A lane acquired while this ran is not among `leases`, so it is never judged by it.
   */
  renew(holder: string, leases: Lease[], leaseMs: number): Promise<Lease[]>;
  release(laneId: string, holder: string): Promise<void>;
  /**
   * The lane's oldest pending message, unless it waits (for a retry or a decision). With `holder`,
   * a lane with nothing due is released by it in the same statement (see `release`).
   */
  nextPending(laneId: string, holder?: string): Promise<PendingEntry | undefined>;
  /**
   * The lane's current conversation: `fresh` when the lane was linked to it now (its thread's first
   * turn), `created` when it did not exist before either (nothing is stored in it).
   */
  conversationFor(
    entry: InboxEntry,
  ): Promise<{ conversation: Conversation; fresh: boolean; created: boolean }>;
  /** Points the lane at a new conversation. */
  startConversation(entry: InboxEntry): Promise<void>;
  replyOf(inboxId: string): Promise<ReplyChunk[]>;
  /**
   * Stores the reply, once; none when an edit superseded the message first. Under a stale `lease`
   * nothing is stored (LeaseLostError); under a held one, the same statement extends it by
   * `leaseMs`, as `claimPost` does.
   */
  saveReply(
    inboxId: string,
    parts: ReplyPart[],
    lease?: Lease,
    leaseMs?: number,
  ): Promise<ReplyChunk[]>;
  /**
   * The prompt of a call's approval or of a question, stored once, before the reply's chunks (its
   * seq is negative).
   */
  savePrompt(
    inboxId: string,
    prompt: { text: string } & ({ approval: ApprovalButtons } | { form: FormButtons }),
  ): Promise<ReplyChunk>;
  /**
   * Puts messages in place of a reply's file chunk that the platform refused: the first takes the
   * chunk's place, the rest follow it, at once. Returns the reply as now stored (another attempt
   * may have done it first).
   */
  replaceFile(inboxId: string, chunkId: string, parts: ReplyPart[]): Promise<ReplyChunk[]>;
  /**
   * Before a chunk is posted: refuses a stale `lease` (LeaseLostError), else extends it by
   * `leaseMs`, so that no one takes the lane over while the post is under way. False when the
   * chunk is recorded as posted already.
   */
  claimPost(chunkId: string, lease: Lease, leaseMs: number): Promise<boolean>;
  /**
   * With `answered`, the reply's last post ends its message too, in the same statement: as
   * `finish`, the message is left as it is under a stale lease (LeaseLostError), the post recorded
   * all the same. True when that statement released the lane too, nothing else waiting in it (as
   * `nextPending` would have): its lease has ended.
   */
  markPosted(
    chunkId: string,
    platformMessageId: string,
    answered?: { inboxId: string; lease: Lease },
  ): Promise<boolean>;
  /** Under a stale `lease` the message is left as it is (LeaseLostError). */
  finish(inboxId: string, status: 'answered' | 'failed', lease?: Lease): Promise<void>;
  retryLater(inboxId: string, delayMs: number): Promise<void>;
  /**
   * The message's turn stopped at calls awaiting a decision: it waits, holding its lane's later
   * messages back, until woken or `until` (when it is due again, to expire them). One stopped
   * meanwhile stays due, to end.
   */
  awaitDecision(inboxId: string, until: Date): Promise<void>;
  /**
   * Lets the message waiting on this call's decision go on now; returns its lane, if one waited.
   */
  wake(toolCallId: string): Promise<string | undefined>;
  /**
   * Marks a message's turn stopped, if its reply is not saved yet: the one with `messageKey`, else
   * the lane's oldest unanswered one. A waiting message is let go on, to end. Returns it and its
   * lane.
   */
  requestStop(
    lane: LaneKey,
    by: string,
    messageKey?: string,
  ): Promise<{ inboxId: string; laneId: string } | undefined>;
  /** Of these messages, those whose turn was stopped, and why. */
  stopsAmong(inboxIds: string[]): Promise<Map<string, StopKind>>;
  /**
   * Ends a message's turn for an edit or a deletion, if its reply is not saved yet (as
   * `requestStop`, with nothing posted). Returns its lane, if it was open.
   */
  supersede(inboxId: string, by: string): Promise<string | undefined>;
  /**
   * Ends every open turn of a workspace, as `supersede` does (nothing is posted): the app was
   * uninstalled there. Returns each message ended and its lane.
   */
  supersedeWorkspace(
    place: { platform: string; workspace: string },
    by: string,
  ): Promise<Array<{ inboxId: string; laneId: string }>>;
  /**
   * A recorded message as it now stands: the newest of it and the messages its edits became (those
   * whose `delivery.original` is its inbox id), where that stands, and whether the message is its
   * lane's last answered one (no other message after it there is answered).
   */
  findMessage(
    platform: string,
    messageKey: string,
  ): Promise<{ entry: InboxEntry; status: string; latest: boolean } | undefined>;
  /** The approval prompts a message's turn posted (or saved to post), in order. */
  promptsOf(inboxId: string): Promise<ReplyChunk[]>;
}
