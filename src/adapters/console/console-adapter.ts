import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Agent } from '../../core/agent.ts';
import type { StorePort } from '../../core/types.ts';

export interface ConsoleOptions {
  session: string;
  input: Readable;
  output: Writable;
  /** Prompt and progress go here on a terminal; nothing is written to it when piped. */
  status: Writable;
  interactive: boolean;
}

/**
 * The local channel: each input line is one user message of one conversation, each final reply
 * one block on stdout. Lines are handled in order; end of input ends the session after the last
 * reply, so `printf 'hi\n' | npm run -s chat` is scriptable.
 */
export async function runConsole(agent: Agent, store: StorePort, options: ConsoleOptions): Promise<void> {
  const conversation = await store.openConversation({ platform: 'console', workspace: 'local', channel: 'console', thread: options.session });
  const lines = createInterface({ input: options.input, terminal: false });
  const prompt = () => options.interactive && options.status.write('you › ');
  prompt();
  for await (const line of lines) {
    const text = line.trim();
    if (!text) {
      prompt();
      continue;
    }
    if (options.interactive) options.status.write('thinking…');
    const { reply } = await agent.runTurn(conversation, text);
    if (options.interactive) options.status.write('\r\x1b[K');
    options.output.write(`${reply}\n`);
    prompt();
  }
}
