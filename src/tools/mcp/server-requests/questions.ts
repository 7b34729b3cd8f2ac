import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import type { Logger } from '../../../core/logger.ts';
import type { ToolContext } from '../../../core/ports/tools.ts';
import type { CallClock } from '../call-clock.ts';
import type { McpServerConfig } from '../config/config.ts';
import { formOf, pageOf } from './elicitation.ts';
import type { SamplingCall } from './sampling.ts';

/** A call under way: whom its server's questions go to, and its clock, paused while they wait. */
export interface RunningCall extends SamplingCall {
  askForm?: ToolContext['askForm'];
  clock: CallClock;
  /**
   * The pages the person agreed to open (2025 URL mode), by elicitationId, each resuming the clock:
   * until the server says one is done (notifications/elicitation/complete), the person is at work
   * on it, not the server.
   */
  pages: Map<string, () => void>;
}

/** A server's questions (elicitation), put to the people whose calls it runs. */
export class ServerQuestions {
  constructor(
    private readonly server: Pick<McpServerConfig, 'name' | 'maxTimeoutMs'>,
    /** The calls to this server under way. */
    private readonly running: ReadonlySet<RunningCall>,
    private readonly logger: Logger,
  ) {}

  /**
   * A server's question, put to the person whose turn made the call: a form, or a page to open (URL
   * mode), whose acceptance is their consent and carries nothing back. It comes as a request (the
   * 2025 era) or inside the call's `input_required` result (2026-07-28, which the SDK answers
   * through this same handler, then retries the call with the answer). MCP does not say which call
   * a request belongs to, so with several calls to this server under way it is declined: a person
   * must never be asked about someone else's call.
   */
  elicit(params: ElicitRequest['params']): Promise<ElicitResult> {
    const [call, ...others] = this.running;
    return this.ask(others.length > 0 ? undefined : call, params);
  }

  /** A server's question put to the person of this call; declined without one to ask. */
  async ask(call: RunningCall | undefined, params: ElicitRequest['params']): Promise<ElicitResult> {
    const { name, maxTimeoutMs } = this.server;
    const question = params.mode === 'url' ? pageOf(name, params) : formOf(name, params);
    if (!call?.askForm || !question) {
      this.logger.info(`MCP server "${name}" asked a question nobody can be asked; declined`);
      return { action: 'decline' };
    }
    const resume = call.clock.pause();
    const answer = await call.askForm(question).catch((error: unknown) => {
      resume();
      throw error;
    });
    const page = params.mode === 'url' && answer.action === 'accept' ? params.elicitationId : '';
    if (!page) resume();
    else {
      // Neither the person nor the server may ever say the page is done: it waits for the call's
      // whole limit at most, then the clock runs again, so no turn waits for good.
      const limit = setTimeout(() => this.pageDone(page), maxTimeoutMs);
      call.pages.set(page, () => {
        clearTimeout(limit);
        resume();
      });
    }
    return question.url ? { action: answer.action } : answer;
  }

  /** The server is done with a page the person opened: the call's clock runs again. */
  pageDone(elicitationId: string): void {
    for (const call of this.running) {
      call.pages.get(elicitationId)?.();
      call.pages.delete(elicitationId);
    }
  }
}
