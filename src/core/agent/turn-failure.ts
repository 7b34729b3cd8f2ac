import type { Logger } from '../logger.ts';
import { ContextLengthError, LlmRequestError } from '../ports/llm.ts';
import { type Conversation } from '../ports/conversation.ts';

export type TurnStatus = 'ok' | 'cut_off' | 'failed';

export interface TurnResult {
  reply: string;
  status: TurnStatus;
}

/** What the user hears when a turn fails: one sentence, with the advice that fits the failure. */
export function failedTurn(conversation: Conversation, error: unknown, logger: Logger): TurnResult {
  if (error instanceof ContextLengthError) {
    return {
      status: 'failed',
      reply: "This conversation no longer fits the model's context window, even after compacting it. Please start a new conversation.",
    };
  }
  if (error instanceof LlmRequestError) {
    logger.error('LLM request failed', { conversation: conversation.id, status: error.status, error: error.message });
    return { status: 'failed', reply: `Sorry, the language model request failed: ${error.message}${error.retryable ? ' Please try again.' : ''}` };
  }
  logger.error('Turn failed', { conversation: conversation.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  return {
    status: 'failed',
    reply: 'Sorry, something went wrong while handling your message. Everything said so far is saved; please try again.',
  };
}
