/**
 * What a model request spends, against the caps: admitted first, its usage stored as the person's,
 * settled once its response is back.
 */
import type { Logger } from '../logger.ts';
import type { LlmPort, LlmRequest, LlmResponse } from '../ports/llm.ts';
import type { UsageRecord } from '../ports/store.ts';
import type { TurnSpend } from '../ports/turns.ts';

/**
 * Where caps apply, a request passes the gate first, holding what it may cost: a hold or the cap
 * reached; undefined where none applies.
 */
export async function admit(
  spend: TurnSpend | undefined,
  request: LlmRequest,
  llm: LlmPort,
): Promise<{ holdId: string } | { refusal: string } | undefined> {
  if (!spend?.admit) return undefined;
  const mostTokens = (await llm.mostTokens?.(request)) ?? request.maxTokens ?? 0;
  return spend.admit(request.model, mostTokens);
}

/** A request's usage as stored: the person it was for, its price, the hold it releases. */
export function usageRecord(
  spend: TurnSpend | undefined,
  response: LlmResponse,
  holdId: string | undefined,
): UsageRecord | undefined {
  const { usage } = response;
  if (!usage) return undefined;
  const cost = spend?.price(usage);
  return {
    ...usage,
    ...(spend ? { user: spend.user } : {}),
    ...(cost === undefined ? {} : { cost }),
    ...(holdId ? { holdId } : {}),
  };
}

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
