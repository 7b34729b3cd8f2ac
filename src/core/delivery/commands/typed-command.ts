import { formatHits } from '../../builtins/search-history.ts';
import type { Asker, Delivery } from '../../ports/platform/platform.ts';
import { usageArguments } from './usage-report.ts';

/**
 * What a command typed as words asks for (Slack's `/spool <verb> …`; a platform with one command
 * per verb builds these from its options). A verb without what it needs (`recall` with no words,
 * `result` with no id) and anything unknown is a request for help.
 */
export type TypedCommand =
  | { verb: 'recall'; query: string }
  | { verb: 'result'; toolCallId: string }
  | { verb: 'prompt'; command: string }
  /** `schedule …`: the words after it (see schedule-desk.ts). */
  | { verb: 'schedule'; words: string }
  /** With `problem`, the words were not understood: that line is the answer, not the report. */
  | { verb: 'usage'; chart: boolean; problem?: string }
  /** Sign-ins to tool servers used with each person's own account: to list, and to end one. */
  | { verb: 'logins' }
  | { verb: 'login'; server: string }
  | { verb: 'logout'; command: string }
  | { verb: 'help' };

/** `<verb> <argument…>`: what the words of a command mean. */
export function typedCommand(text: string): TypedCommand {
  const [verb = 'help', ...rest] = text.trim().split(/\s+/);
  const argument = rest.join(' ');
  if (verb === 'schedule') return { verb, words: text.trim().slice(verb.length).trim() };
  if (verb === 'result' && argument) return { verb, toolCallId: argument };
  if (verb === 'prompt') return { verb, command: argument };
  if (verb === 'usage') {
    const asked = usageArguments(argument, { command: '/spool usage', accepted: ['chart'] });
    return 'problem' in asked ? { verb, chart: false, ...asked } : { verb, ...asked };
  }
  if (verb === 'recall' && argument) return { verb, query: argument };
  if (verb === 'logins') return { verb };
  if (verb === 'login' && argument) return { verb, server: argument };
  if (verb === 'logout') return { verb, command: argument };
  return { verb: 'help' };
}

/**
 * What recall answers `who`: the messages and tool runs in their channel that match `query`, as
 * text; undefined where they may not talk to Spool (the platform's refusal).
 */
export async function recallAnswer(
  delivery: Delivery,
  who: Asker,
  query: string,
): Promise<string | undefined> {
  const hits = await delivery.recall(who, query);
  return hits ? formatHits(query, hits) : undefined;
}
