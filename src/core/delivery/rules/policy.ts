import type { LaneKey } from '../../ports/platform/delivery.ts';
import type { PolicyMatch } from '../../ports/spend.ts';
import type { SpendPolicy } from './spend.ts';

/**
 * What one channel (or workspace, or platform) does differently. Unset fields leave the default.
 */
export interface ChannelPolicy {
  /** Replaces the system prompt. */
  systemPrompt?: string;
  /** Added to the system prompt, after it. */
  systemPromptAddition?: string;
  model?: string;
  /**
   * The tools offered, by name; `*` matches any run of characters (`fs__*` is a whole MCP server).
   */
  tools?: string[];
  /** Who may talk to Spool here (user ids), in place of the platform's allow-list of users. */
  users?: string[];
  /** Any one of these roles lets a person talk to Spool here (Discord). */
  roles?: string[];
  /** The tools whose calls wait for an approver's click, by name with `*`. */
  approve?: string[];
  /** Who may approve (user ids); without it, anyone who may talk to Spool here. */
  approvers?: string[];
  /**
   * Answers apps and workflows that talk to Spool here, as it answers people (off: people only).
   */
  apps?: boolean;
  /**
   * Lets Slack unfurl the links in replies here (previews of the pages and media they point to).
   * Off by default: a reply is the model's words, and a preview is Slack fetching an address the
   * model chose, which a hostile document could have made carry the thread's content.
   */
  unfurl?: boolean;
  /**
   * Emoji (by Slack's name, without colons or skin tone) that ask Spool something when a person
   * reacts with them to a message: the prompt, with the message as its subject.
   */
  reactions?: Record<string, string>;
  /** What Spool says when a person opens its agent view here (Slack's assistant threads). */
  greeting?: string;
  /** Up to four prompts offered there, for this channel as the person's context. */
  suggestedPrompts?: SuggestedPrompt[];
}

/** A prompt offered in the agent view: its title, and the message it sends. */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

export interface PolicyRule extends ChannelPolicy {
  match: PolicyMatch;
}

/** The rules of each place, and the price table and spend caps over them all. */
export interface Policy extends SpendPolicy {
  rules: PolicyRule[];
}

const specificity = ({ match }: PolicyRule) =>
  (match.platform ? 1 : 0) + (match.workspace ? 2 : 0) + (match.channel ? 4 : 0);
const matches = (
  { match }: PolicyRule,
  lane: Pick<LaneKey, 'platform' | 'workspace' | 'channel'>,
) =>
  (!match.platform || match.platform === lane.platform) &&
  (!match.workspace || match.workspace === lane.workspace) &&
  (!match.channel || match.channel === lane.channel);

/**
 * The policy of one place: for each field, the most specific rule that sets it wins (a later rule
 * breaks a tie).
 */
export function policyFor(
  policy: Policy | undefined,
  lane: Pick<LaneKey, 'platform' | 'workspace' | 'channel'>,
): ChannelPolicy {
  const applying = (policy?.rules ?? [])
    .map((rule, order) => ({ rule, order }))
    .filter(({ rule }) => matches(rule, lane));
  applying.sort((a, b) => specificity(a.rule) - specificity(b.rule) || a.order - b.order);
  return applying.reduce<ChannelPolicy>(
    (merged, { rule: { match: _, ...fields } }) => ({ ...merged, ...fields }),
    {},
  );
}

/** Whether a tool name is among the patterns (all are offered when there are none). */
export function toolAllowed(patterns: string[] | undefined, name: string): boolean {
  return !patterns || toolMatches(patterns, name);
}

/** Whether a tool name is among the patterns. */
export function toolMatches(patterns: string[], name: string): boolean {
  return patterns.some((pattern) =>
    new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ).test(name),
  );
}

/**
 * Whether the patterns offer any tool of an MCP server (`<server>__…`): one names a tool of it, or
 * reaches into it with `*` (`fs__*`, `f*`, `*`). All are offered when there are none.
 */
export function serverAllowed(patterns: string[] | undefined, server: string): boolean {
  if (!patterns) return true;
  const prefix = `${server}__`;
  return patterns.some((pattern) => {
    const star = pattern.indexOf('*');
    if (star < 0) return pattern.startsWith(prefix);
    const literal = pattern.slice(0, star);
    return literal.startsWith(prefix) || prefix.startsWith(literal);
  });
}
