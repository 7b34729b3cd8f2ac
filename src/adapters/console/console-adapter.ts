import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import { NotRecordedError, type InboundMessage } from '../../core/ports/platform/delivery.ts';
import type { Delivery, Handled } from '../../core/ports/platform/platform.ts';
import { readLine } from './commands.ts';
import type { ConsoleScreen } from './screen.ts';

export { consoleOutbound } from './outbound.ts';

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

/** What a person at the terminal sees first: what answers them, and how to leave. */
export function welcomeLine(info: { model: string; database: string; tools: number }): string {
  return `Spool · model ${info.model} · ${info.database} · ${info.tools} tool${info.tools === 1 ? '' : 's'} · Ctrl-D or Ctrl-C quits\n`;
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
    const asked = await readLine(delivery, lane, line.trim());
    if ('print' in asked) options.output.write(`${asked.print}\n`);
    else if (asked.say) {
      working = true;
      try {
        const handled = await say(asked.say);
        if (handled.status !== 'accepted' || (await handled.answered) === 'failed') failed++;
      } finally {
        working = stopping = false;
      }
    }
    prompt();
  }
  return failed;
}
