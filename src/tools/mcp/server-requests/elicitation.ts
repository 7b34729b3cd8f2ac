import type { ElicitRequestFormParams, ElicitRequestURLParams } from '@modelcontextprotocol/client';
import type { FormField, FormRequest } from '../../../core/ports/parked/forms.ts';

type Property = ElicitRequestFormParams['requestedSchema']['properties'][string];
type Option = { value: string; label: string };

/** A single or multiple choice's options, in any of the spec's three spellings. */
function optionsOf(p: Record<string, unknown>): Option[] | undefined {
  const items = (p.items ?? {}) as Record<string, unknown>;
  const listed = (p.oneOf ?? p.anyOf ?? items.anyOf ?? items.oneOf) as
    Array<{ const: string; title?: string }> | undefined;
  if (listed) return listed.map((o) => ({ value: o.const, label: o.title ?? o.const }));
  const values = (p.enum ?? items.enum) as string[] | undefined;
  const names = p.enumNames as string[] | undefined;
  return values?.map((value, i) => ({ value, label: names?.[i] ?? value }));
}

function kindOf(p: Property, options: Option[] | undefined): FormField['kind'] {
  if (p.type === 'array') return 'choices';
  if (options) return 'choice';
  if (p.type === 'string') return 'text';
  return p.type;
}

/**
 * An elicitation's schema as a form every platform can show: flat properties of text, numbers,
 * booleans and choices, which is all the spec allows in form mode.
 */
export function formOf(server: string, params: ElicitRequestFormParams): FormRequest {
  const { properties, required = [] } = params.requestedSchema;
  const fields = Object.entries(properties).map(([name, property]): FormField => {
    const p = property as Record<string, unknown>;
    const options = optionsOf(p);
    const min = p.minimum ?? p.minLength ?? p.minItems;
    const max = p.maximum ?? p.maxLength ?? p.maxItems;
    return {
      name,
      label: typeof p.title === 'string' ? p.title : name,
      ...(typeof p.description === 'string' ? { description: p.description } : {}),
      kind: kindOf(property, options),
      required: required.includes(name),
      ...(options ? { options } : {}),
      ...(p.default === undefined ? {} : { default: p.default as FormField['default'] }),
      ...(typeof min === 'number' ? { min } : {}),
      ...(typeof max === 'number' ? { max } : {}),
      ...(typeof p.format === 'string' ? { format: p.format as FormField['format'] } : {}),
    };
  });
  return { from: server, message: params.message, fields };
}

/**
 * A URL elicitation as a question with no fields: the page to open, whose host the person is shown.
 * None for an address that is not http or https, which no chat should offer as a link.
 */
export function pageOf(server: string, params: ElicitRequestURLParams): FormRequest | undefined {
  if (!/^https?:$/.test(URL.parse(params.url)?.protocol ?? '')) return undefined;
  return { from: server, message: params.message, fields: [], url: params.url };
}
