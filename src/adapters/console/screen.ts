import type { Interface } from 'node:readline';
import { Writable } from 'node:stream';

const CLEAR_LINE = '\r\x1b[K';
const THINKING = 'thinking…';

/**
 * The terminal's bottom line, which the prompt (with what the user is typing) and "thinking…"
 * take turns on. Log lines go through `logStream` and land above it; the bottom line is then
 * drawn again, so a log line never runs into the prompt or the indicator.
 */
export class ConsoleScreen {
  /** The bottom line while Spool works; none while the prompt is there. */
  private working?: string;
  private asking = false;
  private prompt?: Interface;

  /** What the logger writes to on an interactive console, instead of stderr itself. */
  readonly logStream = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      this.terminal.write(CLEAR_LINE + String(chunk));
      this.redraw();
      done();
    },
  });

  /** The terminal itself (stderr): readline draws the prompt and echoes keys there. */
  constructor(readonly terminal: NodeJS.WriteStream) {}

  /** The readline interface whose prompt is the bottom line when Spool is not working. */
  attach(prompt: Interface): void {
    this.prompt = prompt;
    // Ctrl-C closes the input while a reply may still be printed; Node 24 throws on a prompt drawn
    // after that (ERR_USE_AFTER_CLOSE), which ended the process before the reply was stored.
    prompt.once('close', () => {
      if (this.prompt === prompt) this.prompt = undefined;
    });
  }

  write(text: string): void {
    this.terminal.write(text);
  }

  /** Shows "thinking…" until the returned function is called. */
  showWorking(): () => void {
    this.showStatus('thinking');
    return () => {
      this.working = undefined;
      this.terminal.write(CLEAR_LINE);
    };
  }

  /** What Spool is doing, in place on the bottom line; not over a question being answered. */
  showStatus(status: string): void {
    if (this.asking) return;
    this.working = status === 'thinking' ? THINKING : `${status}…`;
    this.terminal.write(CLEAR_LINE + this.working);
  }

  /**
   * Asks on the bottom line, in place of "thinking…" or the prompt; resolves with the line typed.
   */
  async ask(question: string): Promise<string> {
    this.working = undefined;
    this.asking = true;
    this.terminal.write(CLEAR_LINE);
    try {
      return await new Promise((resolve) => this.prompt!.question(question, resolve));
    } finally {
      this.asking = false;
    }
  }

  private redraw(): void {
    if (this.working) this.terminal.write(this.working);
    // `true` keeps what the user has typed so far, and the cursor where it was.
    else this.prompt?.prompt(true);
  }
}
