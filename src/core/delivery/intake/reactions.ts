import type { InboundMessage, LaneKey } from '../../ports/platform/delivery.ts';
import { policyFor, type Policy } from '../rules/policy.ts';

/**
 * Reactions as requests, the same on every platform: an emoji the channel's policy maps to a
 * prompt (`reactions`), put on a message by a person, is a message of theirs in that message's
 * lane: the prompt, with the message quoted. An adapter only translates its event into a
 * `Reaction` (the emoji named as the policy names it) and reads the reacted message.
 */
export interface Reaction {
  /** Where the request is answered: the reacted message's thread (Slack), its channel (Discord). */
  lane: LaneKey;
  user: string;
  /** The person's roles, where the platform has them (Discord). */
  roles?: string[];
  /** The emoji, as the policy names it. */
  emoji: string;
  /** The reacted message, unique on its platform (`channel:ts`, `channel:id`). */
  on: string;
}

/** The message a reaction is on, as the adapter read it: who wrote it and what it says. */
export interface ReactedMessage {
  author: string;
  /** Its words as people read them (the platform's markup made plain). */
  text: string;
}

/**
 * Skin tones (U+1F3FB–U+1F3FF) are one emoji, and the variation selector (U+FE0F) is spelled or
 * not: `👍🏽` asks what `👍` asks, `❤️` what `❤`. Names (`mag`, `+1`) are untouched.
 */
const plainEmoji = (emoji: string) => emoji.replace(/\p{Emoji_Modifier}|\uFE0F/gu, '');

/** The prompt the channel's policy maps the emoji to, or none: then the reaction asks nothing. */
export function reactionPrompt(
  policy: Policy | undefined,
  place: Pick<LaneKey, 'platform' | 'workspace' | 'channel'>,
  emoji: string,
): string | undefined {
  const reactions = policyFor(policy, place).reactions ?? {};
  const asked = plainEmoji(emoji);
  return Object.entries(reactions).find(([name]) => plainEmoji(name) === asked)?.[1];
}

/**
 * The key of a reaction's request: one person's one emoji on one message is one request, however
 * often the platform delivers it, and its removal names the same request.
 */
export const reactionKey = ({ on, user, emoji }: Pick<Reaction, 'on' | 'user' | 'emoji'>) =>
  `reaction:${on}:${user}:${plainEmoji(emoji)}`;

/** A message quoted after a request's own words, with who wrote it (`<@id>` on both platforms). */
export function quotedMessage({ author, text }: ReactedMessage): string {
  const quoted = text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  return `The message (from <@${author}>):\n${quoted}`;
}

/**
 * The request a reaction makes: the prompt, then the message quoted, as a message of the person who
 * reacted, under their allow-lists, tools, approvals and caps. `delivery` is what the reply needs.
 */
export function reactionRequest(
  reaction: Reaction,
  prompt: string,
  reacted: ReactedMessage,
  delivery: Record<string, string>,
): InboundMessage {
  return {
    lane: reaction.lane,
    messageKey: reactionKey(reaction),
    kind: 'message',
    user: reaction.user,
    ...(reaction.roles ? { roles: reaction.roles } : {}),
    text: `${prompt}\n\n${quotedMessage(reacted)}`,
    delivery,
  };
}
