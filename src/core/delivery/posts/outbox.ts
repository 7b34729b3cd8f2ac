import {
  FileRefusedError,
  type DeliveryPort,
  type InboxEntry,
  type PendingEntry,
  type ReplyChunk,
  type ReplyLink,
  type ReplyPart,
} from '../../ports/platform/delivery.ts';
import type { Outbound } from '../../ports/platform/platform.ts';
import type { Lease } from '../../ports/store.ts';
import type { Logger } from '../../logger.ts';
import { replyAsFile, replyOfFile } from './reply-file.ts';
import { fileRefusedNote, STOPPED_REPLY } from './replies.ts';

export interface OutboxDeps {
  ledger: Pick<DeliveryPort, 'claimPost' | 'markPosted' | 'replaceFile' | 'replyOf' | 'saveReply'>;
  logger: Logger;
}

export interface OutboxOptions {
  /** How long a claimed post extends the lease. */
  leaseMs: number;
  /** A longer reply is posted as a file, where the platform posts files. */
  replyFileChars: number;
}

/** The note a Stop leaves, as each platform renders it: rendered once, not for every reply. */
const stopNotes = new WeakMap<Outbound, string[]>();

/** The reply is the note a Stop leaves, as the platform renders it. */
function isStopNote(outbound: Outbound, chunks: ReplyChunk[]): boolean {
  let note = stopNotes.get(outbound);
  if (!note) stopNotes.set(outbound, (note = outbound.render(STOPPED_REPLY)));
  return chunks.length === note.length && chunks.every((chunk, i) => chunk.text === note[i]);
}

/**
 * A stored reply's way out: the reply as parts, then each chunk claimed under the lane's lease and
 * posted (or edited in place of an answer it replaces), once.
 */
export class Outbox {
  constructor(
    private readonly deps: OutboxDeps,
    private readonly options: OutboxOptions,
  ) {}

  /**
   * Stores the reply as the platform's messages, or, longer than a few of them, as one file with a
   * message; its links go under the last. The statement that stores it under `lease` extends the
   * lease as a claim does: its first post is claimed with it (see `deliver`).
   */
  save(
    entry: InboxEntry,
    outbound: Outbound,
    text: string,
    links: ReplyLink[] | undefined,
    lease: Lease,
  ): Promise<ReplyChunk[]> {
    const parts =
      outbound.postsFiles && text.length > this.options.replyFileChars
        ? [replyAsFile(text, entry.id)]
        : outbound.render(text).map((part): ReplyPart => ({ text: part }));
    const last = parts.at(-1);
    if (last && links?.length) last.links = links;
    return this.deps.ledger.saveReply(entry.id, parts, lease, this.options.leaseMs);
  }

  /**
   * Posts what of the reply is not posted yet, in order, each chunk claimed under `lease` first. A
   * reply `save` stored just now (not `resumed`: an earlier attempt's) comes with its first post
   * claimed: one statement fewer for a reply of one message. A file the platform refuses for
   * good becomes messages in its place, with a line saying why: the answer is never lost to its
   * upload. True when the last post ended the message as answered (in the statement that recorded
   * it), 'released' when that statement released the lane too; else the caller ends it.
   */
  async deliver(
    entry: PendingEntry,
    outbound: Outbound,
    chunks: ReplyChunk[],
    resumed: boolean,
    lease: Lease,
  ): Promise<boolean | 'released'> {
    const { ledger } = this.deps;
    const queue = chunks.filter((chunk) => !chunk.platformMessageId);
    const { replaced, files } = await this.replacedAnswer(entry, outbound);
    // An answer's last message carries its 👍 and 👎 (not a greeting, nor the note on a new
    // conversation or a Stop).
    const last =
      entry.kind === 'message' && !isStopNote(outbound, chunks)
        ? Math.max(...chunks.map((c) => c.seq))
        : undefined;
    // The last post records the message's end with it, unless files are still to be taken back.
    let answered: boolean | 'released' = false;
    const record = async (chunkId: string, posted: string) => {
      const last = queue.length === 0 && files.length === 0;
      const released = await ledger.markPosted(
        chunkId,
        posted,
        last ? { inboxId: entry.id, lease } : undefined,
      );
      answered = released ? 'released' : last;
    };
    let claimed = !resumed;
    for (let chunk = queue.shift(); chunk; chunk = queue.shift()) {
      const unposted = claimed || (await ledger.claimPost(chunk.id, lease, this.options.leaseMs));
      claimed = false;
      if (!unposted) continue;
      const outgoing = {
        inboxId: entry.id,
        seq: chunk.seq,
        text: chunk.text,
        ...(chunk.file ? { file: chunk.file } : {}),
        ...(chunk.links ? { links: chunk.links } : {}),
        ...(chunk.seq === last ? { feedback: true } : {}),
      };
      // An edited question's answer: a message of the old answer is edited to it (again, after a
      // crash: the same text).
      const inPlace = chunk.file ? undefined : replaced[chunk.seq];
      if (inPlace) {
        await outbound.edit!(entry, inPlace, outgoing);
        await record(chunk.id, inPlace);
        continue;
      }
      // A chunk stored before this attempt may have been posted by a process that died before
      // recording it.
      const found = resumed ? await outbound.findPosted?.(entry, outgoing) : undefined;
      let posted: string;
      try {
        posted = found ?? (await outbound.post(entry, outgoing));
      } catch (error) {
        if (!(chunk.file && error instanceof FileRefusedError)) throw error;
        queue.unshift(...(await this.asMessages(entry, outbound, chunk, chunk.file, error)));
        continue;
      }
      await record(chunk.id, posted);
    }
    // The replaced answer's files go once the new answer is out (again after a crash: no error).
    for (const file of files) await outbound.removeFile!(entry, file);
    return answered;
  }

  /**
   * A reply file the platform refused, stored as messages in its place with a line saying why: the
   * chunks from it on still to post.
   */
  private async asMessages(
    entry: InboxEntry,
    outbound: Outbound,
    chunk: ReplyChunk,
    file: NonNullable<ReplyChunk['file']>,
    error: FileRefusedError,
  ): Promise<ReplyChunk[]> {
    this.deps.logger.warn('The platform refused a reply file; posting it as messages', {
      reason: error.message,
    });
    const note = `_(${fileRefusedNote(error.message)})_`;
    const parts = outbound.render(`${replyOfFile(file)}\n\n${note}`).map((text) => ({ text }));
    const reply = await this.deps.ledger.replaceFile(entry.id, chunk.id, parts);
    return reply.filter((c) => c.seq >= chunk.seq && !c.platformMessageId);
  }

  /**
   * The answer an edited question replaces: its posted messages by seq, to edit in place (text
   * ones only), and its files, to take back.
   */
  private async replacedAnswer(
    entry: InboxEntry,
    outbound: Outbound,
  ): Promise<{ replaced: string[]; files: string[] }> {
    const replaces = entry.delivery.replaces;
    if (!replaces || !outbound.edit) return { replaced: [], files: [] };
    const old = await this.deps.ledger.replyOf(replaces);
    const posted = (chunk: ReplyChunk) => chunk.platformMessageId ?? '';
    return {
      replaced: old.map((chunk) => (chunk.file ? '' : posted(chunk))),
      files: outbound.removeFile ? old.filter((c) => c.file && posted(c)).map(posted) : [],
    };
  }
}
