import type { Handled } from '../../ports/platform/platform.ts';

/** To someone whose message can never be stored (see `problemsOf`): what was wrong with it. */
export const unreadableReply = (problems: string[]) =>
  `I could not read that message: ${problems.join(', ')}.`;

/**
 * What the sender of a handled message is told at once, privately, where the platform can: only
 * a message that can never be stored is answered so (its turn answers the rest, or the refusal).
 */
export const handledReply = (handled: Handled): string | undefined =>
  handled.status === 'malformed' ? unreadableReply(handled.problems) : undefined;
