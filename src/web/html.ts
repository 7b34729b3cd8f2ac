/**
 * HTML built with a tagged template that escapes every value by default: `html\`<p>${text}</p>\``
 * escapes `text`; only another `Html` (a template's own output) goes in as it is. There is no way
 * to mark a plain string as safe, so content from a tool result, a person or the model can reach a
 * page only escaped. (A template library would bring its own runtime and syntax for what these
 * forty lines do; escaping is the one job, and it is all here to read.)
 */
const BUILT_HERE = Symbol('html');

export class Html {
  /** Built only by `html` below: the symbol it takes is not exported. */
  constructor(
    built: typeof BUILT_HERE,
    readonly text: string,
  ) {
    if (built !== BUILT_HERE) throw new TypeError('Html is built only by the html template');
  }

  toString(): string {
    return this.text;
  }
}

/** A value a template takes: escaped unless it is `Html`; lists are joined, nothing is left out. */
export type HtmlValue = Html | string | number | bigint | boolean | null | undefined | HtmlValue[];

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made inert in an element or a quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0]!;
  values.forEach((value, i) => (text += render(value) + strings[i + 1]!));
  return new Html(BUILT_HERE, text);
}
