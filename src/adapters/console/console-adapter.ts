import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import { NotRecordedError, type InboundMessage } from '../../core/ports/delivery.ts';
import type { Delivery, Handled, Outbound } from '../../core/ports/platform.ts';
import { resultAsFile } from '../../core/delivery/stored-result.ts';
import { fieldHint, readForm } from '../../core/delivery/forms.ts';
import type { FormAnswer, FormRequest, RawForm } from '../../core/ports/forms.ts';
import type { ConsoleScreen } from './screen.ts';
import { errorMessage } from '../../core/errors.ts';

export interface ConsoleOptions {
  session: string;
  input: Readable;
  output: Writable;
  /**
   * On a terminal: the prompt with line editing and history, "thinking…", the welcome line. Absent
   * when piped.
   */
  screen?: ConsoleScreen;
  /** Stops reading input (SIGTERM); the message being answered still gets its reply. */
  signal?: AbortSignal;
  /** Shown on the screen before the first prompt. */
  welcome?: string;
}

/** Replies on stdout, one block each; "thinking…" on the terminal while a turn runs. */
export function consoleOutbound(options: Pick<ConsoleOptions, 'output' | 'screen'>): Outbound {
  return {
    render: (reply) => [reply],
    post: async (_message, chunk) => {
      options.output.write(`${chunk.text}\n`);
      return `console-${chunk.seq}`;
    },
    refuse: async () => {},
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
 * form cannot take is asked for again, saying why.
 */
async function askAtTerminal(
  screen: ConsoleScreen,
  output: Writable,
  request: FormRequest,
): Promise<FormAnswer> {
  const choice = await screen.ask(
    `${request.from} asks: ${request.message}\nFill it in? [y = yes, n = decline, c = cancel] `,
  );
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

/** What a person at the terminal sees first: what answers them, and how to leave. */
export function welcomeLine(info: { model: string; database: string; tools: number }): string {
  return `Spool · model ${info.model} · ${info.database} · ${info.tools} tool${info.tools === 1 ? '' : 's'} · Ctrl-D or Ctrl-C quits\n`;
}

/** `/usage`: what was spent in the console, today, this week and this month. */
async function usageText(delivery: Delivery, lane: InboundMessage['lane']): Promise<string> {
  const report = await delivery.usage(
    { lane, user: 'local' },
    { channel: (id) => id, person: (id) => id },
  );
  return report === 'refused' ? 'Usage is not kept here.' : report.text;
}

/**
 * `/result <tool_call_id> <path>`: the whole stored result, written to a file; says what happened.
 */
async function writeResult(
  delivery: Delivery,
  lane: InboundMessage['lane'],
  toolCallId: string,
  path: string,
): Promise<string> {
  const found = await delivery.result({ lane, user: 'local' }, toolCallId);
  const { text, file } = resultAsFile(toolCallId, found === 'refused' ? undefined : found);
  if (!file) return text;
  try {
    await writeFile(path, file.content);
    return `${text} Written to ${path}.`;
  } catch (error) {
    return `Could not write ${path}: ${errorMessage(error)}`;
  }
}

/** A line typed while the database is away waits, and is stored (then answered) once it answers. */
async function handleOnceStored(delivery: Delivery, message: InboundMessage): Promise<Handled> {
  for (let waitMs = 500; ; waitMs = Math.min(2 * waitMs, 10_000)) {
    try {
      return await delivery.handleIncoming(message, { waitForReply: true });
    } catch (error) {
      if (!(error instanceof NotRecordedError)) throw error;
      await setTimeout(waitMs);
    }
  }
}

/**
 * The local channel: each input line is one user message of the session's lane, answered before
 * the next line is read. End of input (or Ctrl-C at the prompt) ends the session after the last
 * reply, so `printf 'hi\n' | npm run -s chat` is scriptable. The outbound must be registered
 * already. Resolves with how many turns failed, so scripts can notice.
 */
export async function runConsole(delivery: Delivery, options: ConsoleOptions): Promise<number> {
  let failed = 0;
  const lane = {
    platform: 'console',
    workspace: 'local',
    channel: 'console',
    thread: options.session,
  };
  const { screen } = options;
  // Whether a turn is under way, and whether Ctrl-C already stopped it.
  let working = false;
  let stopping = false;
  // On a terminal readline edits the line and keeps a history (the arrow keys); piped, it only
  // splits lines.
  const lines = screen
    ? createInterface({
        input: options.input,
        output: screen.terminal,
        terminal: true,
        prompt: 'you › ',
        historySize: 1_000,
        signal: options.signal,
      })
    : createInterface({ input: options.input, terminal: false, signal: options.signal });
  if (screen) {
    screen.attach(lines);
    // Ctrl-C during a turn stops it; at the prompt, or a second time, it ends the input as Ctrl-D
    // does: the reply under way finishes, the lock is released.
    lines.on('SIGINT', () => {
      if (!working || stopping) return lines.close();
      stopping = true;
      // A turn whose reply is out has nothing to stop: the Ctrl-C was meant to quit.
      void delivery.stopTurn({ lane, user: 'local' }).then(
        (outcome) => outcome === 'stopping' || lines.close(),
        () => lines.close(),
      );
    });
    if (options.welcome) screen.write(options.welcome);
  }
  // Node 24 throws on a prompt after the input ended (Node 20 ignored it): prompt only while open.
  let open = true;
  lines.once('close', () => (open = false));
  const prompt = () => open && lines.prompt();
  prompt();
  const say = (text: string) =>
    handleOnceStored(delivery, {
      lane,
      messageKey: randomUUID(),
      kind: 'message',
      user: 'local',
      text,
      delivery: {},
    });
  for await (const line of lines) {
    const text = line.trim();
    const result = /^\/result\s+(\S+)\s+(.+)$/.exec(text);
    const prompted = /^\/prompt(?:\s+(.*))?$/.exec(text);
    const asked = prompted
      ? await delivery.promptText({ lane, user: 'local' }, prompted[1] ?? '')
      : { text };
    if (result)
      options.output.write(`${await writeResult(delivery, lane, result[1]!, result[2]!)}\n`);
    else if (text === '/usage') options.output.write(`${await usageText(delivery, lane)}\n`);
    else if ('problem' in asked) options.output.write(`${asked.problem}\n`);
    else if (asked.text) {
      working = true;
      try {
        const handled = await say(asked.text);
        if (handled.status !== 'accepted' || (await handled.answered) === 'failed') failed++;
      } finally {
        working = stopping = false;
      }
    }
    prompt();
  }
  return failed;
}
