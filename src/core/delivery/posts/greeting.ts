import type { InboxEntry } from '../../ports/platform/delivery.ts';
import { policyFor, type Policy, type SuggestedPrompt } from '../rules/policy.ts';

/** What Spool says in a new agent thread where the policy says nothing of its own. */
export const DEFAULT_GREETING =
  'Hi! Ask me anything here: I answer with the tools this workspace gave me, in this thread.';

/** The agent view's words for a person whose context is `contextChannel` (their open channel). */
export interface AgentView {
  greeting: string;
  /**
   * The prompts to offer; none where the policy sets none, and the app's own (its manifest's)
   * stand.
   */
  prompts?: SuggestedPrompt[];
}

/**
 * The greeting and prompts of the agent view: the policy of the channel the person is looking at
 * (the thread's context), else of the agent thread's own place.
 */
export function agentView(
  policy: Policy | undefined,
  place: Pick<InboxEntry['lane'], 'platform' | 'workspace' | 'channel'>,
  contextChannel?: string,
): AgentView {
  const { greeting, suggestedPrompts } = policyFor(policy, {
    ...place,
    channel: contextChannel || place.channel,
  });
  return {
    greeting: greeting ?? DEFAULT_GREETING,
    ...(suggestedPrompts?.length ? { prompts: suggestedPrompts.slice(0, 4) } : {}),
  };
}

/** The greeting of an agent thread a person opened (an inbox row of kind `greeting`). */
export const greetingOf = (policy: Policy | undefined, entry: InboxEntry): string =>
  agentView(policy, entry.lane, entry.delivery.context).greeting;
