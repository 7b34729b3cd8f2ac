import type { InboxEntry, PendingEntry } from '../../core/ports/platform/delivery.ts';
import { Prisma } from '../generated/client.ts';
import { toEntry, type PendingRow } from './delivery-rows.ts';

/**
 * A character that `String.prototype.trim` keeps, as a PostgreSQL regular expression: a message
 * with one, or with files, runs a turn (see replyTo in the delivery engine's turn.ts).
 */
const READABLE = String.raw`[^\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]`;

/**
 * One statement for what a turn needs to start: the lane's oldest open message, the lane's
 * conversation, and whether a reply was saved; with `holder`, and nothing due, the lane's release
 * too. A lane with no conversation yet, whose message will run a turn, is linked to the one at its
 * key, created if need be (as `DeliveryLedger.conversationFor` does): a new thread's first turn
 * makes no round trip for it.
 */
export const nextPendingStatement = (lane: bigint, holder: string | undefined): Prisma.Sql =>
  Prisma.sql`
  WITH next AS (
    SELECT i.id, i.lane_id, l.platform, l.workspace, l.channel, l.thread, i.message_key, i.kind, i.user_id, i.text,
           i.delivery, i.files, i.attempts, i.available_at <= now() AS due, CASE WHEN i.stop_requested_at IS NULL THEN NULL WHEN i.superseded THEN 'superseded' ELSE 'stop' END AS stopped,
           EXISTS (SELECT 1 FROM outbox o WHERE o.inbox_id = i.id AND o.seq >= 0) AS reply_saved,
           c.id::text AS conversation_id, c.platform AS c_platform, c.workspace AS c_workspace, c.channel AS c_channel, c.thread AS c_thread
      FROM inbox i JOIN lanes l ON l.id = i.lane_id LEFT JOIN conversations c ON c.id = l.conversation_id
     WHERE i.lane_id = ${lane} AND i.status IN ('pending', 'waiting')
     ORDER BY i.id LIMIT 1
  ), made AS (
    INSERT INTO conversations (id, platform, workspace, channel, thread)
    SELECT gen_random_uuid(), platform, workspace, channel, thread FROM next
     WHERE due AND conversation_id IS NULL AND stopped IS NULL AND kind = 'message'
       AND (text ~ ${READABLE} OR CASE WHEN jsonb_typeof(files) = 'array' THEN jsonb_array_length(files) > 0 ELSE false END)
    ON CONFLICT (platform, workspace, channel, thread) DO UPDATE SET thread = EXCLUDED.thread
    RETURNING id, xmax = 0 AS created
  ), linked AS (
    UPDATE lanes SET conversation_id = (SELECT id FROM made)
     WHERE id = ${lane} AND conversation_id IS NULL AND EXISTS (SELECT 1 FROM made)
    RETURNING conversation_id
  ), released AS (
    UPDATE lanes SET holder = NULL, lease_expires_at = NULL
     WHERE id = ${lane} AND holder = ${holder ?? null} AND NOT EXISTS (SELECT 1 FROM next WHERE due)
  )
  SELECT next.*, linked.conversation_id::text AS linked_id, made.created AS linked_created
    FROM next LEFT JOIN linked ON true LEFT JOIN made ON true`;

/** The entry a turn starts from, of a due row `nextPendingStatement` read. */
export function pendingEntryOf(row: PendingRow): PendingEntry {
  // Linked by this statement, the lane's key is the conversation's. (Linked meanwhile by another,
  // the statement's snapshot does not show that link: the turn asks `conversationFor`.)
  const conversation = row.linked_id
    ? {
        conversation: { id: row.linked_id, ...toEntry(row).lane },
        linked: { created: row.linked_created! },
      }
    : row.conversation_id === null
      ? {}
      : {
          conversation: {
            id: row.conversation_id,
            platform: row.c_platform,
            workspace: row.c_workspace,
            channel: row.c_channel,
            thread: row.c_thread,
          },
        };
  return {
    ...toEntry(row),
    ...conversation,
    replySaved: row.reply_saved,
    ...(row.stopped ? { stopped: row.stopped } : {}),
  };
}

/**
 * The conversation at a lane's key, created if need be, and the lane linked to it unless it was
 * linked meanwhile (that link stands): the lane's conversation, whether it is this one (`fresh`),
 * and whether this statement created it. A row the upsert inserted has no deleting transaction
 * yet (xmax 0); an updated one has.
 */
export function linkConversationStatement(entry: InboxEntry): Prisma.Sql {
  const { platform, workspace, channel, thread } = entry.lane;
  return Prisma.sql`
  WITH made AS (
    INSERT INTO conversations (id, platform, workspace, channel, thread) VALUES (gen_random_uuid(), ${platform}, ${workspace}, ${channel}, ${thread})
    ON CONFLICT (platform, workspace, channel, thread) DO UPDATE SET thread = EXCLUDED.thread
    RETURNING id, xmax = 0 AS created
  ), linked AS (
    UPDATE lanes SET conversation_id = coalesce(conversation_id, (SELECT id FROM made))
     WHERE id = ${BigInt(entry.laneId)} RETURNING conversation_id
  )
  SELECT l.conversation_id::text AS id, l.conversation_id = m.id AS fresh, m.created FROM linked l, made m`;
}
