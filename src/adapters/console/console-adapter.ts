import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Outbound } from '../../core/delivery.ts';
import type { InboundPipeline } from '../../core/pipeline.ts';

export interface ConsoleOptions {
  session: string;
  input: Readable;
  output: Writable;
  /** Prompt and progress go here on a terminal; nothing is written to it when piped. */
  status: Writable;
  interactive: boolean;
  /** Stops reading input (SIGTERM, Ctrl-C); the message being answered still gets its reply. */
  signal?: AbortSignal;
}

/** Replies on stdout, one block each; "thinking…" on the terminal while a turn runs. */
export function consoleOutbound(options: Pick<ConsoleOptions, 'output' | 'status' | 'interactive'>): Outbound {
  return {
    render: (reply) => [reply],
    post: async (_message, chunk) => {
      options.output.write(`${chunk.text}\n`);
      return `console-${chunk.seq}`;
    },
    refuse: async () => {},
    showWorking: async () => {
      if (!options.interactive) return async () => {};
      options.status.write('thinking…');
      return async () => void options.status.write('\r\x1b[K');
    },
  };
}

/**
 * The local channel: each input line is one user message of the session's lane, answered before
 * the next line is read. End of input ends the session after the last reply, so
 * `printf 'hi\n' | npm run -s chat` is scriptable. The outbound must be registered already.
 */
/** Answers each line of input in turn; resolves with how many turns failed, so scripts can notice. */
export async function runConsole(pipeline: InboundPipeline, options: ConsoleOptions): Promise<number> {
  let failed = 0;
  const lane = { platform: 'console', workspace: 'local', channel: 'console', thread: options.session };
  const lines = createInterface({ input: options.input, terminal: false, signal: options.signal });
  const prompt = () => options.interactive && options.status.write('you › ');
  prompt();
  for await (const line of lines) {
    const text = line.trim();
    if (text) {
      const handled = await pipeline.handleIncoming({ lane, messageKey: randomUUID(), kind: 'message', user: 'local', text, delivery: {} }, { waitForReply: true });
      if (handled.status !== 'accepted' || (await handled.answered) === 'failed') failed++;
    }
    prompt();
  }
  return failed;
}
