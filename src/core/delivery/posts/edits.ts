import type {
  DeliveryPort,
  InboundEdit,
  InboundMessage,
  InboxEntry,
  StopKind,
} from '../../ports/platform/delivery.ts';
import type { Logger } from '../../logger.ts';
import { STALE_ANSWERS_NOTE } from './replies.ts';

/** Who ended a turn whose message was deleted, where the platform does not say who deleted it. */
const DELETED = 'deleted';

export interface EditDeps {
  ledger: Pick<DeliveryPort, 'findMessage' | 'supersede'>;
  logger: Logger;
  /** Ends the turn of this inbox row, if it runs here. */
  abort(inboxId: string, why: StopKind): void;
  /** Works the lane here, if this process can take it. */
  work(laneId: string): void;
  /** The one inbound path, for the edited message. */
  handleIncoming(message: InboundMessage): Promise<unknown>;
}

/**
 * A person's edit of a message Spool recorded: its turn is run again with the new words, the
 * answer replacing the one posted, if any. Only the author's edit counts. Every edit is followed:
 * each becomes a message of its own (`delivery.original` names the first), and the next edit
 * starts from the newest of them, whose answer is the one on screen. An answered message with
 * answers after it is answered again all the same, in place, with a note that the answers after it
 * came before the edit and may be stale: nothing later is run again. A deletion ends a turn not
 * yet answered, with nothing posted: the author's, or one the platform reports without naming who
 * made it.
 */
export async function followEdit(
  deps: EditDeps,
  edit: InboundEdit,
): Promise<'edited' | 'deleted' | 'ignored'> {
  const { platform } = edit.lane;
  // Another delivery of an edit already followed: the message it became must not be superseded.
  if (await deps.ledger.findMessage(platform, edit.editKey)) return 'ignored';
  const found = await deps.ledger.findMessage(platform, edit.messageKey);
  const byAuthor = edit.user === found?.entry.user;
  // A deletion that names nobody is the platform's word that the message is gone.
  if (!found || !(byAuthor || (edit.user === undefined && edit.text === undefined)))
    return 'ignored';
  const answered = found.status === 'answered';
  if (!answered && found.status !== 'pending' && found.status !== 'waiting') {
    deps.logger.debug('Not following an edit of a message that was not answered', {
      platform,
      inbox: found.entry.id,
    });
    return 'ignored';
  }
  const laneId = answered
    ? undefined
    : await deps.ledger.supersede(found.entry.id, edit.user ?? DELETED);
  if (laneId) {
    deps.abort(found.entry.id, 'superseded' satisfies StopKind);
    deps.work(laneId);
  }
  if (edit.text === undefined) return 'deleted';
  // Whether this answer is stale is decided anew, for where the message now stands.
  const delivery = { ...found.entry.delivery };
  delete delivery.stale;
  await deps.handleIncoming({
    ...found.entry,
    messageKey: edit.editKey,
    kind: 'message',
    text: edit.text,
    delivery: {
      ...delivery,
      original: found.entry.delivery.original ?? found.entry.id,
      // Unless its turn was ended in time, the old answer stands (posted, or saved and about to
      // be): the new one takes its place, message by message. One ended in time replaced nothing
      // itself: its own `replaces`, if any, stays.
      ...(laneId ? {} : { replaces: found.entry.id }),
      ...(found.latest ? {} : { stale: 'true' }),
    },
  });
  return 'edited';
}

/** The reply to an edited message, with the note its place in the thread calls for. */
export function editedReply(entry: InboxEntry, text: string): string {
  return entry.delivery.stale ? `${text}\n\n_(${STALE_ANSWERS_NOTE})_` : text;
}
