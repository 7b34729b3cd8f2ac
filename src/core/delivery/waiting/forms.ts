import type {
  FormField,
  FormRequest,
  FormValue,
  QuestionState,
  RawForm,
} from '../../ports/parked/forms.ts';
import type { FormClickOutcome } from '../../ports/platform/platform.ts';

/**
 * What a person typed or picked, as the server's schema asks for it: every problem named, or the
 * content to send. Empty fields are left out, so the server's defaults apply.
 */
export function readForm(
  request: FormRequest,
  raw: RawForm,
): { content: Record<string, FormValue> } | { problems: string[] } {
  const content: Record<string, FormValue> = {};
  const problems: string[] = [];
  for (const field of request.fields) {
    const given = raw[field.name];
    const empty = given === undefined || (Array.isArray(given) ? given : given.trim()) === '';
    const value = empty
      ? undefined
      : readField(field, Array.isArray(given) ? given : given!.trim());
    if (typeof value === 'object' && 'problem' in value)
      problems.push(`${field.label}: ${value.problem}`);
    else if (value !== undefined) content[field.name] = value;
    else if (field.required && field.default === undefined)
      problems.push(`${field.label}: required`);
  }
  return problems.length ? { problems } : { content };
}

type Read = FormValue | { problem: string };

function readField(field: FormField, given: string | string[]): Read {
  const one = Array.isArray(given) ? given.join(',') : given;
  switch (field.kind) {
    case 'boolean':
      if (/^(y|yes|true|on|1)$/i.test(one)) return true;
      if (/^(n|no|false|off|0)$/i.test(one)) return false;
      return { problem: 'answer yes or no' };
    case 'number':
    case 'integer':
      return readNumber(field, one);
    case 'choice':
      return pick(field, [one])[0] ?? { problem: `choose one of ${labels(field)}` };
    case 'choices': {
      const items = Array.isArray(given) ? given : given.split(',').map((s) => s.trim());
      const picked = pick(field, items.filter(Boolean));
      if (picked.length < items.filter(Boolean).length)
        return { problem: `choose from ${labels(field)}` };
      return withinCount(field, picked);
    }
    case 'text':
      return readText(field, one);
  }
}

const labels = (field: FormField) => field.options!.map((o) => o.label).join(', ');

/** Options by value or by label, as people type them. */
const pick = (field: FormField, items: string[]) =>
  items.flatMap((item) => {
    const option = field.options?.find(
      (o) => o.value === item || o.label.toLowerCase() === item.toLowerCase(),
    );
    return option ? [option.value] : [];
  });

function withinCount(field: FormField, picked: string[]): Read {
  if (field.min !== undefined && picked.length < field.min)
    return { problem: `choose at least ${field.min}` };
  if (field.max !== undefined && picked.length > field.max)
    return { problem: `choose at most ${field.max}` };
  return picked;
}

function readNumber(field: FormField, text: string): Read {
  const n = Number(text);
  if (!Number.isFinite(n) || (field.kind === 'integer' && !Number.isInteger(n)))
    return { problem: field.kind === 'integer' ? 'a whole number' : 'a number' };
  if (field.min !== undefined && n < field.min) return { problem: `at least ${field.min}` };
  if (field.max !== undefined && n > field.max) return { problem: `at most ${field.max}` };
  return n;
}

const FORMATS: Record<NonNullable<FormField['format']>, [RegExp, string]> = {
  email: [/^[^\s@]+@[^\s@]+$/, 'an email address'],
  uri: [/^[a-z][a-z0-9+.-]*:\S+$/i, 'a URL'],
  date: [/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD'],
  'date-time': [/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, 'a date and time as YYYY-MM-DDTHH:MM'],
};

function readText(field: FormField, text: string): Read {
  if (field.min !== undefined && text.length < field.min)
    return { problem: `at least ${field.min} characters` };
  if (field.max !== undefined && text.length > field.max)
    return { problem: `at most ${field.max} characters` };
  const format = field.format && FORMATS[field.format];
  if (format && !format[0].test(text)) return { problem: format[1] };
  return text;
}

/** A field as a line of a prompt: what it is, and what an empty answer gives. */
export function fieldHint(field: FormField): string {
  const choices = field.options ? ` (${labels(field)})` : '';
  const fallback =
    field.default !== undefined
      ? ` [${Array.isArray(field.default) ? field.default.join(', ') : String(field.default)}]`
      : field.required
        ? ' (required)'
        : '';
  return `${field.label}${field.description ? ` — ${field.description}` : ''}${choices}${fallback}`;
}

/** A person as the platform shows them: a mention on Slack and Discord. */
const person = (platform: string, user: string) => (platform === 'console' ? user : `<@${user}>`);

/** The host a page to open is on, which the person is shown before they open it. */
export const pageHost = (url: string) => new URL(url).host;

export function formPrompt(question: Pick<QuestionState, 'request' | 'askedOf' | 'platform'>) {
  const { request, askedOf, platform } = question;
  const asked = request.url ? ` to open a page on ${pageHost(request.url)}` : '';
  return `\`${request.from}\` asks ${person(platform, askedOf)}${asked}: ${request.message}`;
}

/** The prompt once settled: what became of it; what was typed is not repeated in the channel. */
export function settledPrompt(question: QuestionState): string {
  const { request, platform } = question;
  const by = question.by ? ` by ${person(platform, question.by)}` : '';
  switch (question.status) {
    case 'accept':
      return `✅ Answered${by}: \`${request.from}\` asked "${request.message}"`;
    case 'decline':
      return `❌ Declined${by}: \`${request.from}\` asked "${request.message}"`;
    case 'cancel':
    case 'open':
      return `Cancelled${by}: \`${request.from}\` asked "${request.message}"`;
    case 'expired':
      return `⌛ No answer in time, so declined: \`${request.from}\` asked "${request.message}"`;
  }
}

/** What the person who clicked is told, only when their click was not taken as the answer. */
export function formClickReply(outcome: FormClickOutcome, platform: string): string | undefined {
  switch (outcome.status) {
    case 'answered':
      return undefined;
    case 'invalid':
      return `Nothing was sent yet. Please correct:\n${outcome.problems.map((p) => `• ${p}`).join('\n')}`;
    case 'not_allowed':
      return 'Only the person whose message started this can answer it.';
    case 'unknown':
      return 'This question is no longer open.';
    case 'already':
      return `This question was already ${outcome.state.status === 'accept' ? 'answered' : outcome.state.status === 'expired' ? 'closed: nobody answered in time' : `${outcome.state.status}d`}${outcome.state.by ? ` by ${person(platform, outcome.state.by)}` : ''}.`;
  }
}
