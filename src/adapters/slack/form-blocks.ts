import type { FormButtons } from '../../core/ports/platform/delivery.ts';
import { pageHost } from '../../core/delivery/waiting/forms.ts';
import type { FormAnswer, FormField, FormValue, RawForm } from '../../core/ports/parked/forms.ts';

/** The action ids of a question's buttons; each button's value is the question's id. */
export const FORM_ACTIONS: Record<FormAnswer['action'], string> = {
  accept: 'spool_form_submit',
  decline: 'spool_form_decline',
  cancel: 'spool_form_cancel',
};
export const formActionOf = (actionId: string) =>
  (Object.keys(FORM_ACTIONS) as FormAnswer['action'][]).find((a) => FORM_ACTIONS[a] === actionId)!;
const FIELD_BLOCK = 'spool_field:';
/** Block Kit's limits: a label's and an option's text, a select's options. */
const LABEL_CHARS = 2_000;
const OPTION_CHARS = 75;
const MAX_OPTIONS = 100;

const plain = (text: string, max = LABEL_CHARS) => ({
  type: 'plain_text' as const,
  text: text.slice(0, max),
});
const option = (value: string, label: string) => ({ text: plain(label, OPTION_CHARS), value });
const YES_NO = [option('yes', 'Yes'), option('no', 'No')];
/** A default as an option's value: a boolean's is yes or no. */
const asValue = (value: FormValue) =>
  typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value);

function element(field: FormField): Record<string, unknown> {
  const given = field.default;
  if (field.kind === 'number' || field.kind === 'integer')
    return {
      type: 'number_input',
      action_id: 'value',
      is_decimal_allowed: field.kind === 'number',
      ...(given === undefined ? {} : { initial_value: String(given) }),
      ...(field.min === undefined ? {} : { min_value: String(field.min) }),
      ...(field.max === undefined ? {} : { max_value: String(field.max) }),
    };
  if (field.kind === 'text')
    return {
      type: 'plain_text_input',
      action_id: 'value',
      ...(typeof given === 'string' ? { initial_value: given } : {}),
    };
  const options =
    field.kind === 'boolean'
      ? YES_NO
      : field.options!.slice(0, MAX_OPTIONS).map((o) => option(o.value, o.label));
  const defaults = given === undefined ? [] : (Array.isArray(given) ? given : [given]).map(asValue);
  const initial = options.filter((o) => defaults.includes(o.value));
  if (field.kind === 'choices')
    return {
      type: 'multi_static_select',
      action_id: 'value',
      options,
      ...(initial.length ? { initial_options: initial } : {}),
    };
  return {
    type: 'static_select',
    action_id: 'value',
    options,
    ...(initial[0] ? { initial_option: initial[0] } : {}),
  };
}

/**
 * A question as Block Kit: its text, an input per field, then Submit, Decline and Cancel. A page to
 * open has no fields, and its Submit is a link to the page, "Open <host>": Slack opens it and sends
 * the click, which is the person's consent.
 */
export function formBlocks(text: string, { questionId, request }: FormButtons) {
  const button = (label: string, action: FormAnswer['action'], style?: 'primary' | 'danger') => ({
    type: 'button' as const,
    text: plain(label),
    action_id: FORM_ACTIONS[action],
    value: questionId,
    ...(style ? { style } : {}),
  });
  const submit = request.url
    ? { ...button(`Open ${pageHost(request.url)}`, 'accept', 'primary'), url: request.url }
    : button('Submit', 'accept', 'primary');
  return [
    { type: 'section' as const, text: { type: 'mrkdwn' as const, text } },
    ...request.fields.map((field) => ({
      type: 'input' as const,
      block_id: `${FIELD_BLOCK}${field.name}`.slice(0, 255),
      // Checked by Spool on Submit, with every problem named: Block Kit checks only in modals.
      optional: true,
      label: plain(field.label),
      ...(field.description ? { hint: plain(field.description) } : {}),
      element: element(field),
    })),
    {
      type: 'actions' as const,
      block_id: `spool_form:${questionId}`.slice(0, 255),
      elements: [submit, button('Decline', 'decline', 'danger'), button('Cancel', 'cancel')],
    },
  ];
}

interface StateValue {
  value?: string | null;
  selected_option?: { value: string } | null;
  selected_options?: Array<{ value: string }>;
}

/** What was typed and picked in the message's inputs, as Slack sends it with the click. */
export function formValues(
  state: { values?: Record<string, Record<string, StateValue>> } | undefined,
): RawForm {
  const raw: RawForm = {};
  for (const [blockId, actions] of Object.entries(state?.values ?? {})) {
    if (!blockId.startsWith(FIELD_BLOCK)) continue;
    const value = actions.value;
    raw[blockId.slice(FIELD_BLOCK.length)] =
      value?.selected_options?.map((o) => o.value) ??
      value?.selected_option?.value ??
      value?.value ??
      undefined;
  }
  return raw;
}
