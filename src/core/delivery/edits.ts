import type { DeliveryPort, InboundEdit, InboundMessage, StopKind } from '../ports/delivery.ts';
import type { Logger } from '../logger.ts';

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
 * answer replacing the one posted, if any; only the author's edit counts, and only of the
 * thread's last answered message or a later one. A deletion ends a turn not yet answered, with
 * nothing posted.
 */
export async function followEdit(
  deps: EditDeps,
  edit: InboundEdit,
): Promise<'edited' | 'deleted' | 'ignored'> {
  const found = await deps.ledger.findMessage(edit.lane.platform, edit.messageKey);
  if (!found || found.entry.user !== edit.user) return 'ignored';
  const answered = found.status === 'answered';
  if (!(answered ? found.latest : found.status === 'pending' || found.status === 'waiting')) {
    deps.logger.debug('Not following an edit of an older message', {
      platform: edit.lane.platform,
      inbox: found.entry.id,
    });
    return 'ignored';
  }
  const laneId = answered ? undefined : await deps.ledger.supersede(found.entry.id, edit.user);
  if (laneId) {
    deps.abort(found.entry.id, 'superseded' satisfies StopKind);
    deps.work(laneId);
  }
  if (edit.text === undefined) return 'deleted';
  const { delivery } = found.entry;
  await deps.handleIncoming({
    ...found.entry,
    messageKey: edit.editKey,
    kind: 'message',
    text: edit.text,
    // Unless its turn was ended in time, the old answer stands (posted, or saved and about to
    // be): the new one takes its place, message by message.
    delivery: laneId ? delivery : { ...delivery, replaces: found.entry.id },
  });
  return 'edited';
}
