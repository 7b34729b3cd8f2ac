import {
  ComponentType,
  TextInputStyle,
  type APIModalInteractionResponseCallbackData,
} from 'discord.js';
import { REASON_MAX_CHARS } from '../../../core/delivery/posts/feedback.ts';

/** The 👎's reason modal carries the answer's inbox row: `spool:feedback-reason:<inbox id>`. */
export const REASON_MODAL = /^spool:feedback-reason:(\d+)$/;
const REASON_INPUT = 'reason';

/** After a 👎 (stored already): why, optionally; closing the modal keeps the 👎 as it is. */
export const reasonModal = (inboxId: string): APIModalInteractionResponseCallbackData => ({
  custom_id: `spool:feedback-reason:${inboxId}`,
  title: 'Saved: what was wrong?',
  components: [
    {
      type: ComponentType.ActionRow,
      components: [
        {
          type: ComponentType.TextInput,
          custom_id: REASON_INPUT,
          label: 'Why (optional)',
          style: TextInputStyle.Paragraph,
          required: false,
          max_length: REASON_MAX_CHARS,
        },
      ],
    },
  ],
});

/** What was typed in the reason modal. */
export const reasonOf = (fields: { getTextInputValue(id: string): string }): string =>
  fields.getTextInputValue(REASON_INPUT);
