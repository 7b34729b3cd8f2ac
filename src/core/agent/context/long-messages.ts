import { buildPreview, type PreviewSizes } from '../results/preview.ts';
import type { Message } from '../../ports/conversation.ts';

export interface UserPreview extends PreviewSizes {
  /** A user message longer than this reaches the model as a preview; the store keeps it whole. */
  maxChars: number;
}

/** The id get_continuation reads a long user message by: there is one user message per turn. */
export const userMessageId = (turn: number) => `user_turn_${turn}`;
const USER_MESSAGE_ID = /^user_turn_(\d+)$/;

/** The whole text of a user message named by `userMessageId`, from the transcript. */
export function userMessageText(transcript: readonly Message[], id: string): string | undefined {
  const turn = USER_MESSAGE_ID.exec(id)?.[1];
  return turn === undefined
    ? undefined
    : transcript.find((m) => m.role === 'user' && m.turn === Number(turn))?.content;
}

/**
 * A pasted log or file as a user message is shown as a head+tail preview, like a long tool
 * result, and read on with get_continuation: a megabyte message never fills the context of its
 * own turn or of any later one. Depends only on the message, so prefixes stay byte-stable.
 */
export function previewLongUserMessages(
  messages: readonly Message[],
  options: UserPreview,
): Message[] {
  return messages.map((m) =>
    m.role === 'user' && m.content.length > options.maxChars
      ? { ...m, content: buildPreview(m.content, userMessageId(m.turn), options) }
      : m,
  );
}
