import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';

/**
 * A call's time limits: `idleMs` since the server's last word (progress restarts it) and `totalMs`
 * in all. Time a person spends answering the server's question counts toward neither: the server
 * is waiting on them, not working. Past a limit, `signal` aborts with the SDK's timeout error, and
 * the SDK cancels the call on the server (notifications/cancelled).
 */
export class CallClock {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private idle?: NodeJS.Timeout;
  private total?: NodeJS.Timeout;
  private totalLeftMs: number;
  private runningSince = 0;
  private pauses = 0;

  constructor(
    private readonly idleMs: number,
    totalMs: number,
    private readonly turn: AbortSignal,
  ) {
    // Not AbortSignal.any([turn, own]): the SDK never removes its abort listener, and Node keeps a
    // combined signal with a listener alive while its sources are, and with it each call's result.
    this.signal = this.controller.signal;
    if (turn.aborted) this.controller.abort(turn.reason);
    else turn.addEventListener('abort', this.turnStopped);
    this.totalLeftMs = totalMs;
    this.run();
  }

  /** The server said something (progress): its idle time starts again. */
  heard(): void {
    if (this.pauses > 0) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.expire(), this.idleMs);
  }

  /** Stops both limits until the returned function is called (once per pause). */
  pause(): () => void {
    if (this.pauses++ === 0) {
      this.clear();
      this.totalLeftMs -= Date.now() - this.runningSince;
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.pauses === 0) this.run();
    };
  }

  stop(): void {
    this.clear();
    this.turn.removeEventListener('abort', this.turnStopped);
  }

  private readonly turnStopped = () => this.controller.abort(this.turn.reason);

  private run(): void {
    this.runningSince = Date.now();
    this.heard();
    this.total = setTimeout(() => this.expire(), Math.max(0, this.totalLeftMs));
  }

  private clear(): void {
    clearTimeout(this.idle);
    clearTimeout(this.total);
  }

  private expire(): void {
    this.clear();
    this.controller.abort(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'));
  }
}
