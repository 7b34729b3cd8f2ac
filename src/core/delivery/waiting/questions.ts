import { randomUUID } from 'node:crypto';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { DeliveryPort, InboxEntry } from '../../ports/platform/delivery.ts';
import type {
  FormAnswer,
  FormRequest,
  QuestionPort,
  QuestionState,
} from '../../ports/parked/forms.ts';
import type {
  Asker,
  FormClick,
  FormClickOutcome,
  Outbound,
} from '../../ports/platform/platform.ts';
import { formPrompt, readForm, settledPrompt } from './forms.ts';

export interface QuestionDeps {
  questions: QuestionPort;
  ledger: DeliveryPort;
  logger: Logger;
}

/**
 * Questions a tool asks mid-call. Unlike an approval, the call is running on its server, so the
 * turn waits here, holding its lane, while the prompt (an outbox row, posted once) waits for the
 * person who started the turn. The answer is kept on the question's row: a click on any replica
 * records it, the first one wins, and this process reads it (at once when the click came here,
 * else within `pollMs`). No answer by the deadline declines, as a shutdown or Stop cancels.
 */
export class QuestionDesk {
  private readonly wakers = new Map<string, () => void>();

  constructor(
    private readonly deps: QuestionDeps,
    private readonly options: { timeoutMs: number; pollMs: number },
  ) {}

  async ask(
    entry: InboxEntry,
    outbound: Outbound,
    request: FormRequest,
    signal: AbortSignal,
  ): Promise<FormAnswer> {
    // Where the person is at hand (the console), they are asked now.
    if (outbound.askForm) return outbound.askForm(entry, request);
    const { questions, ledger } = this.deps;
    const question = {
      id: randomUUID(),
      inboxId: entry.id,
      platform: entry.lane.platform,
      askedOf: entry.user,
      request,
    };
    const expiresAt = await questions.open(question, this.options.timeoutMs);
    const form = { questionId: question.id, request };
    const chunk = await ledger.savePrompt(entry.id, { text: formPrompt(question), form });
    const outgoing = { inboxId: entry.id, seq: chunk.seq, text: chunk.text, form };
    const posted = await outbound.post(entry, outgoing);
    await ledger.markPosted(chunk.id, posted);
    const state = await this.settled(question.id, expiresAt, signal);
    await outbound
      .edit?.(entry, posted, { inboxId: entry.id, seq: chunk.seq, text: settledPrompt(state) })
      .catch((error: unknown) =>
        this.deps.logger.warn('Could not mark a question answered', { error: errorMessage(error) }),
      );
    if (state.status === 'accept') return { action: 'accept', content: state.content ?? {} };
    return { action: state.status === 'cancel' ? 'cancel' : 'decline' };
  }

  /** The open question `who` may answer, for a platform that shows the form on a click. */
  async form(who: Asker, questionId: string): Promise<FormRequest | FormClickOutcome> {
    const state = await this.deps.questions.state(questionId);
    const refused = refusal(state, who);
    return refused ?? state!.request;
  }

  /** A click on a prompt: only the person asked may answer, and only the first answer counts. */
  async answer(click: FormClick): Promise<FormClickOutcome> {
    const { questions } = this.deps;
    const state = await questions.state(click.questionId);
    const refused = refusal(state, click);
    if (refused) return refused;
    let answer: FormAnswer = { action: click.action === 'accept' ? 'decline' : click.action };
    if (click.action === 'accept') {
      const read = readForm(state!.request, click.values ?? {});
      if ('problems' in read) return { status: 'invalid', problems: read.problems };
      answer = { action: 'accept', content: read.content };
    }
    const decided = await questions.answer(click.questionId, answer, click.user);
    if (!decided) return { status: 'unknown' };
    if (!decided.won) return { status: 'already', state: decided.state };
    this.wakers.get(click.questionId)?.();
    return { status: 'answered' };
  }

  /** Waits for the answer, the deadline or the turn's end, whichever comes first. */
  private async settled(id: string, expiresAt: Date, signal: AbortSignal): Promise<QuestionState> {
    const { questions } = this.deps;
    for (;;) {
      const state = await questions.state(id);
      if (state && state.status !== 'open') return state;
      const ended = signal.aborted ? 'cancel' : Date.now() >= expiresAt.getTime() ? 'expired' : '';
      // An expiry counts only once due on the database's clock: until then, this looks again.
      if (ended) {
        const decided = await questions.answer(id, { action: ended });
        if (decided && decided.state.status !== 'open') return decided.state;
      }
      const untilDue = +expiresAt - Date.now();
      await this.nap(id, Math.max(100, Math.min(this.options.pollMs, untilDue)), signal);
    }
  }

  private nap(id: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakers.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.wakers.set(id, done);
    });
  }
}

function refusal(state: QuestionState | undefined, who: Asker): FormClickOutcome | undefined {
  if (!state || state.platform !== who.lane.platform) return { status: 'unknown' };
  if (state.status !== 'open') return { status: 'already', state };
  if (state.askedOf !== who.user) return { status: 'not_allowed' };
  return undefined;
}
