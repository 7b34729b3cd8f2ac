import type {
  AcquiredLease,
  ApprovalButtons,
  FormButtons,
  LaneKey,
  StopKind,
  InboundMessage,
  InboxEntry,
  DeliveryPort,
  PendingEntry,
  ReplyChunk,
  ReplyPart,
} from '../../core/ports/platform/delivery.ts';
import type { Conversation } from '../../core/ports/conversation.ts';
import type { Lease } from '../../core/ports/store.ts';
import { conversationAt } from '../transcripts/conversations.ts';
import { GroupCommit } from '../group-commit.ts';
import {
  acquireLease,
  extendLease,
  fence,
  leaseLost,
  releaseLease,
  renewLeases,
} from '../leases.ts';
import type pg from 'pg';
import type { Database } from '../database.ts';
import { Prisma, type PrismaClient } from '../generated/client.ts';
import { queryOnPool, runOnPool } from '../pool-statement.ts';
import {
  toChunk,
  toEntry,
  type ChunkRow,
  type InboxRow,
  type PendingRow,
} from './delivery-rows.ts';
import { linkConversationStatement, nextPendingStatement, pendingEntryOf } from './next-pending.ts';

/** A message to record, and what recording it found: its row, or none for a duplicate. */
interface Arrival {
  message: InboundMessage;
  refused: boolean;
  row?: { id: bigint; lane_id: bigint | null };
}

/** As many record statements in flight as the ack client has connections (Database.ackPrisma). */
const RECORDS_IN_FLIGHT = 2;

/**
 * The inbox, the outbox and the lane leases, kept apart from history. Every lease decision is
 * one conditional statement on the database's clock, so replicas never disagree about time.
 */
export class DeliveryLedger implements DeliveryPort {
  /**
   * `ack` records inbound messages: a client on connections of its own (Database.ackPrisma), where
   * there is one.
   */
  private readonly prisma: PrismaClient;
  private readonly pool: pg.Pool;
  private readonly ack: PrismaClient;
  private readonly leasePool: pg.Pool;

  /**
   * `ackPrisma` and `leasePool`: connections of the acks' and of the heartbeat's own (see
   * Database); the turns' pool when not given.
   */
  constructor(
    db: Pick<Database, 'prisma' | 'pool'> & Partial<Pick<Database, 'ackPrisma' | 'leasePool'>>,
  ) {
    this.prisma = db.prisma;
    this.pool = db.pool;
    this.ack = db.ackPrisma ?? db.prisma;
    this.leasePool = db.leasePool ?? db.pool;
  }

  /**
   * The delivery path's statements go to the pool directly (see runOnPool): a statement through
   * Prisma's adapter costs a turn several times the CPU of the same statement through pg.
   */
  private rows<T extends pg.QueryResultRow[]>(statement: Prisma.Sql): Promise<T> {
    return runOnPool(this.pool, statement) as Promise<T>;
  }

  /** How many rows the statement changed. */
  private async changed(statement: Prisma.Sql): Promise<number> {
    return (await queryOnPool(this.pool, statement)).rowCount ?? 0;
  }

  /**
   * Messages arriving together are recorded in one statement (see GroupCommit): in a burst, an
   * ack waits for a few statements, not for its place in a queue of one statement each.
   */
  private readonly arrivals = new GroupCommit<Arrival>((batch) => this.recordAll(batch), {
    inFlight: RECORDS_IN_FLIGHT,
    maxBatch: 200,
  });

  async record(message: InboundMessage, refused: boolean): Promise<InboxEntry | undefined> {
    const arrival: Arrival = { message, refused };
    await this.arrivals.submit(arrival);
    const row = arrival.row;
    return (
      row && {
        ...message,
        id: String(row.id),
        laneId: row.lane_id === null ? '' : String(row.lane_id),
        attempts: 0,
      }
    );
  }

  /**
   * Records a batch and gives each arrival its row, in the batch's order. The lane is created with
   * the message (so the thread is known from its first mention on), except for a refused message,
   * which must not make a thread known; a message for known lanes only is recorded only where its
   * lane exists. A known lane is read, not upserted: the upsert locked each row in the batch's
   * order, and a heartbeat renewing leases (rows locked in id order) deadlocked with it, its
   * renewal failing while its leases ran out. Only new lanes are upserted, in key order (the
   * upsert finds one another statement created meanwhile).
   */
  private async recordAll(batch: Arrival[]): Promise<void> {
    const messages = batch.map(({ message: m, refused }, i) => ({
      i,
      ...m.lane,
      message_key: m.messageKey,
      kind: m.kind,
      user_id: m.user,
      text: m.text,
      delivery: m.delivery,
      files: m.files?.length && !refused ? m.files : null,
      refused,
      known_only: Boolean(m.knownLaneOnly),
    }));
    const rows = await this.ack.$queryRaw<
      Array<{ id: bigint; lane_id: bigint | null; platform: string; message_key: string }>
    >`
      WITH x AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(messages)}::jsonb) AS x(i int, platform text, workspace text, channel text, thread text,
               message_key text, kind text, user_id text, text text, delivery jsonb, files jsonb, refused boolean, known_only boolean)),
      made AS (
        INSERT INTO lanes (platform, workspace, channel, thread)
        SELECT DISTINCT platform, workspace, channel, thread FROM x
         WHERE NOT refused AND NOT known_only AND NOT EXISTS (
           SELECT 1 FROM lanes l WHERE l.platform = x.platform AND l.workspace = x.workspace AND l.channel = x.channel AND l.thread = x.thread)
         ORDER BY 1, 2, 3, 4
        ON CONFLICT (platform, workspace, channel, thread) DO UPDATE SET thread = EXCLUDED.thread
        RETURNING id, platform, workspace, channel, thread)
      INSERT INTO inbox (platform, message_key, lane_id, kind, user_id, text, delivery, files, status, answered_at)
      SELECT x.platform, x.message_key, CASE WHEN x.refused THEN NULL ELSE coalesce(m.id, l.id) END, x.kind, x.user_id, x.text, x.delivery, x.files,
             CASE WHEN x.refused THEN 'refused' ELSE 'pending' END, CASE WHEN x.refused THEN now() END
        FROM x
        LEFT JOIN made m ON m.platform = x.platform AND m.workspace = x.workspace AND m.channel = x.channel AND m.thread = x.thread
        LEFT JOIN lanes l ON l.platform = x.platform AND l.workspace = x.workspace AND l.channel = x.channel AND l.thread = x.thread
       WHERE NOT x.known_only OR l.id IS NOT NULL
       ORDER BY x.i
      ON CONFLICT (platform, message_key) DO NOTHING
      RETURNING id, lane_id, platform, message_key`;
    const byKey = new Map(rows.map((r) => [`${r.platform}\n${r.message_key}`, r]));
    // A key twice in one batch is one row: the first arrival has it, the other is a duplicate.
    for (const arrival of batch) {
      const key = `${arrival.message.lane.platform}\n${arrival.message.messageKey}`;
      arrival.row = byKey.get(key);
      byKey.delete(key);
    }
  }

  async claimableLanes(platforms: string[], limit: number): Promise<string[]> {
    const rows = await this.rows<Array<{ lane_id: string }>>(Prisma.sql`
      SELECT DISTINCT i.lane_id FROM inbox i JOIN lanes l ON l.id = i.lane_id
       WHERE i.status IN ('pending', 'waiting') AND i.available_at <= now() AND i.platform = ANY(${platforms})
         AND (l.holder IS NULL OR l.lease_expires_at < now())
       LIMIT ${limit}`);
    return rows.map((r) => String(r.lane_id));
  }

  acquire(laneId: string, holder: string, leaseMs: number): Promise<AcquiredLease | undefined> {
    return acquireLease(this.pool, laneId, holder, leaseMs);
  }

  renew(holder: string, leases: Lease[], leaseMs: number): Promise<Lease[]> {
    return renewLeases(this.leasePool, holder, leases, leaseMs);
  }

  release(laneId: string, holder: string): Promise<void> {
    return releaseLease(this.pool, laneId, holder);
  }

  /**
   * Every lease, whoever held it: for a database only this process can reach (the embedded one).
   */
  async releaseAll(): Promise<void> {
    await this.prisma.lane.updateMany({
      where: { holder: { not: null } },
      data: { holder: null, leaseExpiresAt: null },
    });
  }

  /** What a turn needs to start, in one statement (`nextPendingStatement`). */
  async nextPending(laneId: string, holder?: string): Promise<PendingEntry | undefined> {
    const [row] = await this.rows<PendingRow[]>(nextPendingStatement(BigInt(laneId), holder));
    // The oldest message waits for its retry or a decision, and everything behind it waits too:
    // order first.
    return row?.due ? pendingEntryOf(row) : undefined;
  }

  /** The lane's conversation, when it had none as its message was read: one statement links it. */
  async conversationFor(
    entry: InboxEntry,
  ): Promise<{ conversation: Conversation; fresh: boolean; created: boolean }> {
    const [row] = await this.rows<Array<{ id: string; fresh: boolean; created: boolean }>>(
      linkConversationStatement(entry),
    );
    if (row?.fresh)
      return { conversation: { id: row.id, ...entry.lane }, fresh: true, created: row.created };
    const [known] = await this.rows<Conversation[]>(Prisma.sql`
      SELECT c.id::text, c.platform, c.workspace, c.channel, c.thread FROM lanes l JOIN conversations c ON c.id = l.conversation_id WHERE l.id = ${BigInt(entry.laneId)}`);
    return { conversation: known!, fresh: false, created: false };
  }

  async startConversation(entry: InboxEntry): Promise<void> {
    const conversation = await conversationAt(this.prisma, {
      ...entry.lane,
      thread: `new-${entry.messageKey}`,
    });
    await this.link(BigInt(entry.laneId), conversation);
  }

  private async link(laneId: bigint, conversation: Conversation): Promise<void> {
    await this.changed(
      Prisma.sql`UPDATE lanes SET conversation_id = ${conversation.id}::uuid WHERE id = ${laneId}`,
    );
  }

  async replyOf(inboxId: string): Promise<ReplyChunk[]> {
    const rows = await this.prisma.outboxChunk.findMany({
      where: { inboxId: BigInt(inboxId), seq: { gte: 0 } },
      orderBy: { seq: 'asc' },
    });
    return rows.map(toChunk);
  }

  async savePrompt(
    inboxId: string,
    prompt: { text: string } & ({ approval: ApprovalButtons } | { form: FormButtons }),
  ): Promise<ReplyChunk> {
    const id = BigInt(inboxId);
    const toolCallId = 'approval' in prompt ? prompt.approval.toolCallId : null;
    const questionId = 'form' in prompt ? prompt.form.questionId : null;
    // One lane is worked by one holder at a time, so the next free seq below the others is this
    // one's.
    await this.changed(Prisma.sql`
      INSERT INTO outbox (inbox_id, seq, text, tool_call_id, question_id)
      SELECT ${id}, least(coalesce(min(seq), 0), 0) - 1, ${prompt.text}, ${toolCallId}, ${questionId} FROM outbox WHERE inbox_id = ${id}
      ON CONFLICT DO NOTHING`);
    const row = await this.prisma.outboxChunk.findFirstOrThrow({
      where: toolCallId ? { inboxId: id, toolCallId } : { inboxId: id, questionId },
    });
    return { ...toChunk(row), ...('form' in prompt ? { form: prompt.form } : {}) };
  }

  async saveReply(
    inboxId: string,
    parts: ReplyPart[],
    lease?: Lease,
    leaseMs?: number,
  ): Promise<ReplyChunk[]> {
    const rows = parts.map(({ text, file, links }, seq) => ({
      seq,
      text,
      file_name: file?.name ?? null,
      file_content: file?.content ?? null,
      file_language: file?.language ?? null,
      links: links ?? null,
    }));
    // The message's row is locked while the reply is saved, so an edit's supersede (which locks it
    // too) comes wholly before, and nothing is saved, or wholly after, and finds the reply. Under a
    // lease, the lane's row is written too, its lease extended as `claimPost` extends it, so a
    // takeover comes wholly before (nothing is saved) or after the lease runs out again.
    const open = Prisma.sql`SELECT id FROM inbox WHERE id = ${BigInt(inboxId)} AND NOT superseded`;
    const opened = lease
      ? Prisma.sql`WITH held AS (${extendLease(lease, leaseMs)}), open AS (${open} AND EXISTS (SELECT 1 FROM held) FOR UPDATE)`
      : Prisma.sql`WITH open AS (${open} FOR UPDATE)`;
    const created = await this.rows<ChunkRow[]>(Prisma.sql`
      ${opened}
      INSERT INTO outbox (inbox_id, seq, text, file_name, file_content, file_language, links)
      SELECT open.id, seq, text, file_name, file_content, file_language, links
        FROM open, jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(seq int, text text, file_name text, file_content text, file_language text, links jsonb)
      ON CONFLICT DO NOTHING
      RETURNING id, seq, text, file_name AS "fileName", file_content AS "fileContent", file_language AS "fileLanguage", links, tool_call_id AS "toolCallId", platform_message_id AS "platformMessageId"`);
    if (created.length === 0) await this.fenced(lease);
    // Another attempt saved some first: the reply is what is stored.
    return created.length === parts.length
      ? created.sort((a, b) => a.seq - b.seq).map(toChunk)
      : this.replyOf(inboxId);
  }

  async replaceFile(inboxId: string, chunkId: string, parts: ReplyPart[]): Promise<ReplyChunk[]> {
    const [first, ...rest] = parts;
    const more = rest.map(({ text }, i) => ({ i: i + 1, text }));
    // One statement: the file's row becomes the first message (its place, so the platform treats it
    // as the reply's start) and the rest follow it, or nothing changes (a repeat finds no file
    // row).
    await this.changed(Prisma.sql`
      WITH first AS (
        UPDATE outbox SET text = ${first?.text ?? ''}, file_name = NULL, file_content = NULL, file_language = NULL
         WHERE id = ${BigInt(chunkId)} AND file_name IS NOT NULL RETURNING inbox_id, seq)
      INSERT INTO outbox (inbox_id, seq, text)
      SELECT first.inbox_id, first.seq + x.i, x.text FROM first, jsonb_to_recordset(${JSON.stringify(more)}::jsonb) AS x(i int, text text)`);
    return this.replyOf(inboxId);
  }

  async claimPost(chunkId: string, lease: Lease, leaseMs: number): Promise<boolean> {
    // One statement on the lane's row: a takeover (which writes the row too) comes wholly before,
    // and the claim is refused, or after the lease it extends here has run out again.
    const [row] = await this.rows<Array<{ held: boolean; unposted: boolean | null }>>(Prisma.sql`
      WITH held AS (${extendLease(lease, leaseMs)})
      SELECT EXISTS (SELECT 1 FROM held) AS held,
             (SELECT platform_message_id IS NULL FROM outbox WHERE id = ${BigInt(chunkId)}) AS unposted`);
    if (!row?.held) throw leaseLost(lease);
    return row.unposted !== false;
  }

  async markPosted(
    chunkId: string,
    platformMessageId: string,
    answered?: { inboxId: string; lease: Lease },
  ): Promise<boolean> {
    const posted = Prisma.sql`UPDATE outbox SET platform_message_id = ${platformMessageId}, posted_at = now() WHERE id = ${BigInt(chunkId)}`;
    if (!answered) {
      await this.changed(posted);
      return false;
    }
    const { inboxId, lease } = answered;
    const lane = BigInt(lease.laneId);
    // The statement's snapshot still shows the message pending (its `answered` update is not
    // visible to the rest of it), hence `id <>`. A message recorded after the snapshot finds the
    // lane released, and is worked as one arriving at an idle lane is (see nextPending).
    const [row] = await this.rows<Array<{ answered: boolean; released: boolean }>>(Prisma.sql`
      WITH posted AS (${posted} RETURNING id),
      answered AS (
        UPDATE inbox SET status = 'answered', answered_at = now() WHERE id = ${BigInt(inboxId)} AND ${fence(lease)}
        RETURNING id),
      released AS (
        UPDATE lanes SET holder = NULL, lease_expires_at = NULL
         WHERE id = ${lane} AND generation = ${BigInt(lease.generation)} AND holder IS NOT NULL
           AND EXISTS (SELECT 1 FROM answered)
           AND NOT EXISTS (SELECT 1 FROM inbox WHERE lane_id = ${lane} AND status IN ('pending', 'waiting') AND id <> ${BigInt(inboxId)})
        RETURNING id)
      SELECT EXISTS (SELECT 1 FROM answered) AS answered, EXISTS (SELECT 1 FROM released) AS released`);
    if (!row?.answered) await this.fenced(lease);
    return row?.released ?? false;
  }

  async finish(inboxId: string, status: 'answered' | 'failed', lease?: Lease): Promise<void> {
    const done = await this.changed(
      Prisma.sql`UPDATE inbox SET status = ${status}, answered_at = now() WHERE id = ${BigInt(inboxId)} AND ${fence(lease)}`,
    );
    if (done === 0) await this.fenced(lease);
  }

  /** Throws LeaseLostError when `lease` is no longer its lane's (another holder took it). */
  private async fenced(lease: Lease | undefined): Promise<void> {
    if (!lease) return;
    const [row] = await this.rows<Array<{ held: boolean }>>(Prisma.sql`
      SELECT EXISTS (SELECT 1 FROM lanes WHERE id = ${BigInt(lease.laneId)} AND generation = ${BigInt(lease.generation)}) AS held`);
    if (!row?.held) throw leaseLost(lease);
  }

  async retryLater(inboxId: string, delayMs: number): Promise<void> {
    await this.changed(Prisma.sql`
      UPDATE inbox SET attempts = attempts + 1, available_at = now() + ${delayMs}::int * interval '1 millisecond' WHERE id = ${BigInt(inboxId)}`);
  }

  async awaitDecision(inboxId: string, until: Date): Promise<void> {
    // A Stop (or an edit) taken while the prompts were posted keeps the message due, to end now.
    await this.changed(
      Prisma.sql`UPDATE inbox SET status = 'waiting', available_at = ${until} WHERE id = ${BigInt(inboxId)} AND stop_requested_at IS NULL`,
    );
  }

  async wake(toolCallId: string): Promise<string | undefined> {
    // A prompt's call names its message in the outbox; any other (a sign-in's) its lane: a lane's
    // one waiting message is the one whose turn stopped at it.
    const [row] = await this.rows<Array<{ lane_id: string }>>(Prisma.sql`
      UPDATE inbox SET status = 'pending', available_at = now()
       WHERE status = 'waiting'
         AND (id IN (SELECT inbox_id FROM outbox WHERE tool_call_id = ${toolCallId})
              OR lane_id IN (SELECT l.id FROM tool_calls c JOIN lanes l ON l.conversation_id = c.conversation_id
                              WHERE c.tool_call_id = ${toolCallId}))
      RETURNING lane_id`);
    return row && String(row.lane_id);
  }

  async requestStop(
    lane: LaneKey,
    by: string,
    messageKey?: string,
  ): Promise<{ inboxId: string; laneId: string } | undefined> {
    // One statement: the message is stopped once, whichever replica took the click; a waiting one
    // is due at once, to end. One whose reply is saved has finished its turn: nothing to stop.
    const [row] = await this.rows<Array<{ id: string; lane_id: string }>>(Prisma.sql`
      UPDATE inbox SET stop_requested_at = coalesce(stop_requested_at, now()), stopped_by = coalesce(stopped_by, ${by}),
             status = 'pending', available_at = least(available_at, now())
       WHERE id = (
         SELECT i.id FROM inbox i JOIN lanes l ON l.id = i.lane_id
          WHERE l.platform = ${lane.platform} AND l.workspace = ${lane.workspace} AND l.channel = ${lane.channel} AND l.thread = ${lane.thread}
            AND i.status IN ('pending', 'waiting') AND (${messageKey ?? null}::text IS NULL OR i.message_key = ${messageKey ?? null})
            AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.inbox_id = i.id AND o.seq >= 0)
          ORDER BY i.id LIMIT 1)
      RETURNING id, lane_id`);
    return row && { inboxId: String(row.id), laneId: String(row.lane_id) };
  }

  async stopsAmong(inboxIds: string[]): Promise<Map<string, StopKind>> {
    const rows = await this.rows<Array<{ id: string; superseded: boolean }>>(Prisma.sql`
      SELECT id, superseded FROM inbox
       WHERE id = ANY(${inboxIds.map(BigInt)}::bigint[]) AND stop_requested_at IS NOT NULL`);
    return new Map(rows.map((r) => [String(r.id), r.superseded ? 'superseded' : 'stop']));
  }

  async supersede(inboxId: string, by: string): Promise<string | undefined> {
    const id = BigInt(inboxId);
    // Locked first, then checked in a statement of its own: it sees a reply saved while it waited
    // for the lock (see saveReply).
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM inbox WHERE id = ${id} FOR UPDATE`;
      const [row] = await tx.$queryRaw<Array<{ lane_id: bigint }>>`
        UPDATE inbox i SET stop_requested_at = coalesce(stop_requested_at, now()), stopped_by = coalesce(stopped_by, ${by}),
               superseded = true, status = 'pending', available_at = least(available_at, now())
         WHERE id = ${id} AND status IN ('pending', 'waiting')
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.inbox_id = i.id AND o.seq >= 0)
        RETURNING lane_id`;
      return row && String(row.lane_id);
    });
  }

  async supersedeWorkspace(
    place: { platform: string; workspace: string },
    by: string,
  ): Promise<Array<{ inboxId: string; laneId: string }>> {
    // As `supersede`, for every open message of the workspace at once: one statement, so a replica's
    // stop poll finds them all.
    const rows = await this.rows<Array<{ id: bigint; lane_id: bigint }>>(Prisma.sql`
      UPDATE inbox i SET stop_requested_at = coalesce(stop_requested_at, now()), stopped_by = coalesce(stopped_by, ${by}),
             superseded = true, status = 'pending', available_at = least(available_at, now())
        FROM lanes l
       WHERE l.id = i.lane_id AND l.platform = ${place.platform} AND l.workspace = ${place.workspace}
         AND i.status IN ('pending', 'waiting')
         AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.inbox_id = i.id AND o.seq >= 0)
      RETURNING i.id, i.lane_id`);
    return rows.map((r) => ({ inboxId: String(r.id), laneId: String(r.lane_id) }));
  }

  async findMessage(
    platform: string,
    messageKey: string,
  ): Promise<{ entry: InboxEntry; status: string; latest: boolean } | undefined> {
    // The message's newest form: itself, or the last of the messages its edits became. It is the
    // latest when no message after it in the lane is answered, an edited one standing where its
    // first form does.
    const [row] = await this.rows<Array<InboxRow & { status: string; latest: boolean }>>(Prisma.sql`
      WITH root AS (SELECT id, lane_id FROM inbox WHERE platform = ${platform} AND message_key = ${messageKey})
      SELECT i.id, i.lane_id, l.platform, l.workspace, l.channel, l.thread, i.message_key, i.kind, i.user_id, i.text,
             i.delivery, i.files, i.attempts, i.status,
             NOT EXISTS (SELECT 1 FROM inbox later WHERE later.lane_id = root.lane_id AND later.status = 'answered'
                           AND coalesce((later.delivery->>'original')::bigint, later.id) > root.id) AS latest
        FROM root JOIN inbox i ON i.lane_id = root.lane_id AND (i.id = root.id OR i.delivery->>'original' = root.id::text)
        JOIN lanes l ON l.id = i.lane_id
       ORDER BY i.id DESC LIMIT 1`);
    return row && { entry: toEntry(row), status: row.status, latest: row.latest };
  }

  async promptsOf(inboxId: string): Promise<ReplyChunk[]> {
    const rows = await this.prisma.outboxChunk.findMany({
      where: { inboxId: BigInt(inboxId), seq: { lt: 0 }, toolCallId: { not: null } },
      orderBy: { seq: 'desc' },
    });
    return rows.map(toChunk);
  }

  /** Unanswered messages, and how long the oldest has waited: for the metrics. */
  async depth(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await this.rows<Array<{ pending: number; oldest_seconds: number }>>(Prisma.sql`
      SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(received_at)), 0)::float8 AS oldest_seconds
        FROM inbox WHERE status = 'pending'`);
    return { pending: row!.pending, oldestSeconds: row!.oldest_seconds };
  }

  /**
   * Handled messages (and their outbox rows) older than `days`; pending and waiting ones are kept
   * whatever their age.
   */
  async prune(days: number): Promise<number> {
    const { count } = await this.prisma.inboxEntry.deleteMany({
      where: {
        status: { notIn: ['pending', 'waiting'] },
        receivedAt: { lt: new Date(Date.now() - days * 86_400_000) },
      },
    });
    return count;
  }
}
