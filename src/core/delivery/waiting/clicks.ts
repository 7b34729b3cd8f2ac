import type { FormAnswer, RawForm } from '../../ports/parked/forms.ts';
import type { Asker, Delivery } from '../../ports/platform/platform.ts';
import type { Rating } from '../../ports/feedback.ts';
import { clickReply } from '../posts/approval-text.ts';
import { feedbackReply } from '../posts/feedback.ts';
import { formClickReply } from './forms.ts';

/** What a click on one of Spool's buttons asks for, on any platform. */
export type SpoolClick =
  | { kind: 'approval'; toolCallId: string; approve: boolean }
  /** Answer, Decline or Cancel on a question; `values`, what was typed for Answer. */
  | { kind: 'form'; questionId: string; action: FormAnswer['action']; values?: RawForm }
  /** Stop, under a message's working line: its turn ends. */
  | { kind: 'stop'; messageKey: string }
  /** 👍 or 👎 under an answer: the reply to inbox row `inboxId`. */
  | { kind: 'feedback'; inboxId: string; rating: Rating };

export const NOTHING_TO_STOP = 'Nothing to stop: that answer is finished.';

/**
 * A button's id, where a platform gives each button one string (Discord's custom_id):
 * `spool:approve:<tool_call_id>`, `spool:deny:…`, `spool:form:<action>:<question id>`,
 * `spool:stop:<message key>`, `spool:feedback:<up|down>:<inbox id>`.
 */
export function buttonId(click: SpoolClick): string {
  switch (click.kind) {
    case 'approval':
      return `spool:${click.approve ? 'approve' : 'deny'}:${click.toolCallId}`;
    case 'form':
      return `spool:form:${click.action}:${click.questionId}`;
    case 'stop':
      return `spool:stop:${click.messageKey}`;
    case 'feedback':
      return `spool:feedback:${click.rating}:${click.inboxId}`;
  }
}

const STOP_BUTTON = /^spool:stop:(.+)$/;
const FORM_BUTTON = /^spool:form:(accept|decline|cancel):(.+)$/;
const APPROVAL_BUTTON = /^spool:(approve|deny):(.+)$/;
const FEEDBACK_BUTTON = /^spool:feedback:(up|down):(\d+)$/;

/** What a button's id (see `buttonId`) asks for; undefined for a button that is not Spool's. */
export function clickOf(id: string): SpoolClick | undefined {
  const [, messageKey] = STOP_BUTTON.exec(id) ?? [];
  if (messageKey) return { kind: 'stop', messageKey };
  const [, action, questionId] = FORM_BUTTON.exec(id) ?? [];
  if (questionId) return { kind: 'form', questionId, action: action as FormAnswer['action'] };
  const [, decision, toolCallId] = APPROVAL_BUTTON.exec(id) ?? [];
  if (toolCallId) return { kind: 'approval', toolCallId, approve: decision === 'approve' };
  const [, rating, inboxId] = FEEDBACK_BUTTON.exec(id) ?? [];
  if (inboxId) return { kind: 'feedback', inboxId, rating: rating as Rating };
  return undefined;
}

/**
 * Takes `who`'s click to the delivery engine. Returns what to tell them privately when the click
 * changed nothing (someone else's call, a question already answered, a finished answer; `refusal`
 * where they may not use Spool), or undefined: a prompt is edited by the turn that waits, and a
 * stopped turn ends within half a second.
 */
export async function answerClick(
  delivery: Delivery,
  who: Asker,
  click: SpoolClick,
  { platform, refusal }: { platform: string; refusal: string },
): Promise<string | undefined> {
  switch (click.kind) {
    case 'stop': {
      const outcome = await delivery.stopTurn(who, click.messageKey);
      if (outcome === 'stopping') return undefined;
      return outcome === 'refused' ? refusal : NOTHING_TO_STOP;
    }
    case 'approval': {
      const { toolCallId, approve } = click;
      return clickReply(await delivery.decideApproval({ ...who, toolCallId, approve }), platform);
    }
    case 'feedback': {
      const rating = { ...who, inboxId: click.inboxId, rating: click.rating };
      return feedbackReply(await delivery.rateAnswer(rating), rating);
    }
    case 'form': {
      const { questionId, action, values } = click;
      const answer = { ...who, questionId, action, ...(values ? { values } : {}) };
      return formClickReply(await delivery.answerForm(answer), platform);
    }
  }
}
