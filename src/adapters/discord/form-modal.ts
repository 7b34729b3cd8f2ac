import type { FormButtons } from '../../core/ports/delivery.ts';
import type { FormField, FormRequest, RawForm } from '../../core/ports/forms.ts';

/** A question's buttons and modal carry its id: `spool:form:<action>:<question id>`. */
export const FORM_BUTTON = /^spool:form:(accept|decline|cancel):(.+)$/;
export const FORM_MODAL = /^spool:form:(.+)$/;
/** What a Discord modal holds: five inputs, a title and labels of 45 chars, hints of 100. */
export const MODAL_FIELDS = 5;
const TITLE_CHARS = 45;
const HINT_CHARS = 100;

/** Answer, Decline and Cancel, as one row of message components. */
export const formComponents = ({ questionId }: FormButtons) => [
  {
    type: 1,
    components: (
      [
        ['Answer', 'accept', 1],
        ['Decline', 'decline', 4],
        ['Cancel', 'cancel', 2],
      ] as const
    ).map(([label, action, style]) => ({
      type: 2,
      style,
      label,
      custom_id: `spool:form:${action}:${questionId}`,
    })),
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
export function formModal(questionId: string, request: FormRequest) {
  return {
    custom_id: `spool:form:${questionId}`,
    title: `${request.from} asks`.slice(0, TITLE_CHARS),
    components: request.fields.map((field) => {
      const value = defaultText(field);
      return {
        type: 1,
        components: [
          {
            type: 4,
            custom_id: field.name,
            label: field.label.slice(0, TITLE_CHARS),
            style: field.kind === 'text' && (field.max ?? Infinity) > HINT_CHARS ? 2 : 1,
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
