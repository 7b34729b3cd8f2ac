import type { ApprovalButtons } from '../../core/ports/platform/delivery.ts';

/** The action ids of an approval prompt's buttons; each button's value is the call's id. */
export const APPROVE_ACTION = 'spool_approve';
export const DENY_ACTION = 'spool_deny';

/** An approval prompt as Block Kit: its text, then Approve and Deny. */
export function approvalBlocks(text: string, { toolCallId }: ApprovalButtons) {
  const button = (label: string, actionId: string, style: 'primary' | 'danger') => ({
    type: 'button' as const,
    text: { type: 'plain_text' as const, text: label },
    action_id: actionId,
    value: toolCallId,
    style,
  });
  return [
    { type: 'section' as const, text: { type: 'mrkdwn' as const, text } },
    {
      type: 'actions' as const,
      block_id: `approval-${toolCallId}`.slice(0, 255),
      elements: [
        button('Approve', APPROVE_ACTION, 'primary'),
        button('Deny', DENY_ACTION, 'danger'),
      ],
    },
  ];
}
