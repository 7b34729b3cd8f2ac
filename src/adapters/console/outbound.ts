import type { Writable } from 'node:stream';
import type { InboundMessage, ReplyLink } from '../../core/ports/platform/delivery.ts';
import type { Outbound } from '../../core/ports/platform/platform.ts';
import { fieldHint, pageHost, readForm } from '../../core/delivery/waiting/forms.ts';
import type { FormAnswer, FormRequest, RawForm } from '../../core/ports/parked/forms.ts';
import type { ConsoleScreen } from './screen.ts';

/** Links as lines of the terminal: `label: address`. */
export const linkLines = (links: readonly ReplyLink[] = []) =>
  links.map((link) => `${link.label}: ${link.url}`);

/** Replies on stdout, one block each; "thinking…" on the terminal while a turn runs. */
export function consoleOutbound(options: { output: Writable; screen?: ConsoleScreen }): Outbound {
  return {
    render: (reply) => [reply],
    // Its links under it, each an address to open.
    post: async (_message, chunk) => {
      options.output.write(`${[chunk.text, ...linkLines(chunk.links)].join('\n')}\n`);
      return `console-${chunk.seq}`;
    },
    // A scheduled run: its header, then its answer, each its own conversation.
    startThread: async (message, text) => {
      options.output.write(`${text}\n`);
      return `scheduled-${message.messageKey}`;
    },
    tell: async (_person, text) => void options.output.write(`${text}\n`),
    refuse: async () => {},
    // The terminal is the person's own.
    showPrivately: async (_message, text, link) => {
      options.output.write(`${[text, ...linkLines([link])].join('\n')}\n`);
    },
    // Whoever sits at the terminal decides; with no terminal, nobody can, and the call is denied.
    askApproval: async (_message, prompt) => {
      if (!options.screen)
        return {
          approved: false,
          note: 'there is no terminal to ask on, so nobody could approve it',
        };
      const answer = await options.screen.ask(`${prompt}\nApprove? [y/N] `);
      return { approved: /^y(es)?$/i.test(answer.trim()) };
    },
    // Nobody at a terminal means nobody to ask: the server's question is declined.
    askForm: async (_message, request) =>
      options.screen
        ? askAtTerminal(options.screen, options.output, request)
        : { action: 'decline' },
    showWorking: async () => {
      const clear = options.screen?.showWorking();
      return async () => clear?.();
    },
    ...(options.screen && {
      showStatus: async (_message: InboundMessage, status: string) =>
        options.screen!.showStatus(status),
    }),
  };
}

/**
 * A tool's form, field by field: Enter leaves a field empty (its default applies), and a value the
 * form cannot take is asked for again, saying why. A page to open is shown by its host and address,
 * and yes is the person's word that they open it.
 */
async function askAtTerminal(
  screen: ConsoleScreen,
  output: Writable,
  request: FormRequest,
): Promise<FormAnswer> {
  const question = request.url
    ? `${request.from} asks you to open a page on ${pageHost(request.url)}: ${request.message}\n${request.url}\nOpen it?`
    : `${request.from} asks: ${request.message}\nFill it in?`;
  const choice = await screen.ask(`${question} [y = yes, n = decline, c = cancel] `);
  if (/^c/i.test(choice.trim())) return { action: 'cancel' };
  if (!/^y/i.test(choice.trim())) return { action: 'decline' };
  const raw: RawForm = {};
  for (const field of request.fields)
    for (;;) {
      raw[field.name] = await screen.ask(`${fieldHint(field)}: `);
      const read = readForm({ ...request, fields: [field] }, raw);
      if (!('problems' in read)) break;
      output.write(`${read.problems.join('\n')}\n`);
    }
  const read = readForm(request, raw);
  return 'content' in read ? { action: 'accept', content: read.content } : { action: 'decline' };
}
