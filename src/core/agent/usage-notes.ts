import type { Logger } from '../logger.ts';
import type { LlmResponse } from '../ports/llm.ts';
import type { TurnSpend } from '../ports/turns.ts';

/**
 * What a response's usage asks of the turn once it is back. Usage is bookkeeping: the counts the
 * client had to adjust (see `LlmUsage.adjusted`) are logged, never a reason to fail the step's
 * write; and a request whose response carried no usage releases its hold now, there being no usage
 * write to release it.
 */
export async function settleUsage(
  response: LlmResponse,
  holdId: string | undefined,
  spend: TurnSpend | undefined,
  logger: Logger,
): Promise<void> {
  const { usage } = response;
  if (usage?.adjusted?.length)
    logger.warn(
      `[usage] The model server reported usage Spool cannot keep as it is: ${usage.adjusted
        .map((a) => `${a.field} ${a.reported} (${a.fix})`)
        .join(', ')}`,
      { model: usage.model, ...(usage.responseId ? { response: usage.responseId } : {}) },
    );
  if (!usage && holdId) await spend?.release?.(holdId).catch(() => {});
}
