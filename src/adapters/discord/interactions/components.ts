import { ButtonStyle, ComponentType } from 'discord.js';
import { buttonId } from '../../../core/delivery/waiting/clicks.ts';
import type { ApprovalButtons, ReplyLink } from '../../../core/ports/platform/delivery.ts';

/** One row of buttons, each naming what its click asks for (core/delivery/waiting/clicks.ts). */
const row = (buttons: Array<{ label: string; style: ButtonStyle; id: string }>) => [
  {
    type: ComponentType.ActionRow,
    components: buttons.map(({ label, style, id }) => ({
      type: ComponentType.Button,
      style,
      label,
      custom_id: id,
    })),
  },
];

/** Stop, under the working line: its custom_id names the message whose turn it stops. */
export const stopComponents = (messageKey: string) =>
  row([
    { label: 'Stop', style: ButtonStyle.Secondary, id: buttonId({ kind: 'stop', messageKey }) },
  ]);

/** Approve and Deny, as one row of message components. */
export const approvalComponents = ({ toolCallId }: ApprovalButtons) =>
  row(
    (
      [
        ['Approve', ButtonStyle.Success, true],
        ['Deny', ButtonStyle.Danger, false],
      ] as const
    ).map(([label, style, approve]) => ({
      label,
      style,
      id: buttonId({ kind: 'approval', toolCallId, approve }),
    })),
  );

/** 👍 and 👎 under an answer's last message: the answer is the reply to inbox row `inboxId`. */
export const feedbackComponents = (inboxId: string) =>
  row(
    (['up', 'down'] as const).map((rating) => ({
      label: rating === 'up' ? '👍' : '👎',
      style: ButtonStyle.Secondary,
      id: buttonId({ kind: 'feedback', inboxId, rating }),
    })),
  );

/** Discord's limit on a button's label. */
const LABEL_CHARS = 80;

/** Links as one row of link buttons (they open the page; Discord sends Spool nothing); none without. */
export const linkComponents = (links: readonly ReplyLink[] = []) =>
  links.length === 0
    ? []
    : [
        {
          type: ComponentType.ActionRow,
          components: links.map((link) => ({
            type: ComponentType.Button,
            style: ButtonStyle.Link,
            label: link.label.slice(0, LABEL_CHARS),
            url: link.url,
          })),
        },
      ];
