import type { ApprovalPort, ApprovalState } from '../../ports/parked/approvals.ts';
import type { DeliveryPort, InboxEntry } from '../../ports/platform/delivery.ts';
import type { Outbound } from '../../ports/platform/platform.ts';
import { STOPPED_NOTE } from '../posts/approval-text.ts';
import { STOPPED_PROMPT } from '../posts/replies.ts';

export interface StoppedPromptDeps {
  ledger: Pick<DeliveryPort, 'promptsOf'>;
  approvals: Pick<ApprovalPort, 'decide'>;
}

/** A call a Stop ended before it ran: undecided then, or clicked in the moment before the Stop. */
const endedByStop = (state: ApprovalState) =>
  state.note === STOPPED_NOTE || (state.status === 'approved' && !state.started);

/**
 * A turn a person stopped: each approval prompt it left waiting is decided as stopped (denied, with
 * STOPPED_NOTE, so a later click is told the turn was stopped) and edited to say so, its buttons
 * gone. Again after a crash: the same edit, no second decision.
 */
export async function closeStoppedPrompts(
  deps: StoppedPromptDeps,
  entry: InboxEntry,
  outbound: Outbound,
): Promise<void> {
  for (const prompt of await deps.ledger.promptsOf(entry.id)) {
    const toolCallId = prompt.approval?.toolCallId;
    if (!toolCallId) continue;
    const decided = await deps.approvals.decide(entry.lane, toolCallId, {
      status: 'denied',
      note: STOPPED_NOTE,
    });
    if (!decided || !endedByStop(decided.state) || !prompt.platformMessageId || !outbound.edit)
      continue;
    await outbound.edit(entry, prompt.platformMessageId, {
      inboxId: entry.id,
      seq: prompt.seq,
      text: STOPPED_PROMPT,
    });
  }
}
