import {
  ButtonStyle,
  ComponentType,
  TextInputStyle,
  type APIModalInteractionResponseCallbackData,
} from 'discord.js';
import { buttonId } from '../../../core/delivery/waiting/clicks.ts';
import { pageHost } from '../../../core/delivery/waiting/forms.ts';
import type { FormButtons } from '../../../core/ports/platform/delivery.ts';
import type { FormField, FormRequest, RawForm } from '../../../core/ports/parked/forms.ts';

/** A question's modal carries its id: `spool:form:<question id>` (its buttons, see clicks.ts). */
export const FORM_MODAL = /^spool:form:(.+)$/;
/** What a Discord modal holds: five inputs, a title and labels of 45 chars, hints of 100. */
export const MODAL_FIELDS = 5;
const TITLE_CHARS = 45;
/** A button's label. */
const LABEL_CHARS = 80;
const HINT_CHARS = 100;

/**
 * Answer, Decline and Cancel, as one row of message components. A page to open comes first as a
 * link, "Open <host>" (Discord tells Spool nothing of a link's click), and Answer reads Done: the
 * person's word that they opened it.
 */
export const formComponents = ({ questionId, request }: FormButtons) => [
  {
    type: ComponentType.ActionRow,
    components: [
      ...(request.url
        ? [
            {
              type: ComponentType.Button as const,
              style: ButtonStyle.Link as const,
              label: `Open ${pageHost(request.url)}`.slice(0, LABEL_CHARS),
              url: request.url,
            },
          ]
        : []),
      ...(
        [
          [request.url ? 'Done' : 'Answer', 'accept', ButtonStyle.Primary],
          ['Decline', 'decline', ButtonStyle.Danger],
          ['Cancel', 'cancel', ButtonStyle.Secondary],
        ] as const
      ).map(([label, action, style]) => ({
        type: ComponentType.Button as const,
        style,
        label,
        custom_id: buttonId({ kind: 'form', questionId, action }),
      })),
    ],
  },
];

const defaultText = (field: FormField) =>
  field.default === undefined
    ? undefined
    : Array.isArray(field.default)
      ? field.default.join(', ')
      : typeof field.default === 'boolean'
        ? field.default
          ? 'yes'
          : 'no'
        : String(field.default);

/** What a field takes, said in the input's placeholder: a modal has text inputs only. */
function placeholder(field: FormField): string {
  const hint =
    field.kind === 'boolean'
      ? 'yes or no'
      : field.options
        ? `${field.kind === 'choices' ? 'any of' : 'one of'}: ${field.options.map((o) => o.label).join(', ')}`
        : (field.description ?? '');
  return hint.slice(0, HINT_CHARS);
}

/** The form as a modal: one text input per field (at most MODAL_FIELDS). */
export function formModal(
  questionId: string,
  request: FormRequest,
): APIModalInteractionResponseCallbackData {
  return {
    custom_id: `spool:form:${questionId}`,
    title: `${request.from} asks`.slice(0, TITLE_CHARS),
    components: request.fields.map((field) => {
      const value = defaultText(field);
      return {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.TextInput,
            custom_id: field.name,
            label: field.label.slice(0, TITLE_CHARS),
            style:
              field.kind === 'text' && (field.max ?? Infinity) > HINT_CHARS
                ? TextInputStyle.Paragraph
                : TextInputStyle.Short,
            required: false,
            ...(value ? { value } : {}),
            ...(placeholder(field) ? { placeholder: placeholder(field) } : {}),
          },
        ],
      };
    }),
  };
}

/** What a submitted modal holds, by field (discord.js's fields, by custom id). */
export const modalValues = (fields: ReadonlyMap<string, unknown>): RawForm =>
  Object.fromEntries([...fields].map(([id, data]) => [id, (data as { value?: string }).value]));

export const tooManyFields = (request: FormRequest) =>
  `\`${request.from}\` asks for ${request.fields.length} fields, and a Discord form holds ${MODAL_FIELDS}, so it cannot be answered here: please Decline it.`;
