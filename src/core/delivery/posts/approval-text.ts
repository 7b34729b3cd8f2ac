import type { ApprovalState, ClickOutcome } from '../../ports/parked/approvals.ts';
import type { PendingCall } from '../../ports/turns.ts';
import { redactSecretPatterns } from '../../redact.ts';
import { headAtLineBreak, tailAtLineBreak } from '../../text.ts';

/** The note on a call whose turn a Stop ended (see stopped-prompts.ts). */
export const STOPPED_NOTE = 'stopped';

/** What of a call's arguments a prompt shows: enough to judge, never a wall of text. */
const ARGS_PREVIEW_CHARS = 1_200;

/**
 * The arguments as people read them: indented JSON, secrets masked, long values cut in the middle.
 */
function argumentsPreview(
  args: Record<string, unknown>,
  mask: (text: string) => string = (t) => t,
): string {
  const json = mask(redactSecretPatterns(JSON.stringify(args, null, 2)));
  if (json.length <= ARGS_PREVIEW_CHARS) return json;
  const head = headAtLineBreak(json, ARGS_PREVIEW_CHARS * 0.75);
  const tail = tailAtLineBreak(json, ARGS_PREVIEW_CHARS * 0.2);
  return `${head}\n… ${json.length - head.length - tail.length} more characters …\n${tail}`;
}

export function approvalPrompt(call: PendingCall, mask?: (text: string) => string): string {
  return `Spool wants to run \`${call.name}\` with:\n\`\`\`\n${argumentsPreview(call.args, mask)}\n\`\`\`\nAn approver's click decides.`;
}

/** A person as the platform shows them: a mention on Slack and Discord. */
export const person = (platform: string, user: string) =>
  platform === 'console' ? user : `<@${user}>`;
const when = (at: Date | undefined) =>
  (at ?? new Date())
    .toISOString()
    .replace(/\.\d+Z$/, ' UTC')
    .replace('T', ' ');

/** The prompt once decided: who decided, which way and when; its buttons are gone. */
export function decidedPrompt(call: PendingCall, state: ApprovalState, platform: string): string {
  if (state.status === 'expired')
    return `⌛ Expired at ${when(state.at)} with no decision: \`${call.name}\` was not run.`;
  const by = state.by ? ` by ${person(platform, state.by)}` : '';
  return `${state.status === 'approved' ? '✅ Approved' : '❌ Denied'}${by} at ${when(state.at)}: \`${call.name}\`.`;
}

export const duration = (ms: number) => {
  const [n, unit] =
    ms >= 120_000 ? [Math.round(ms / 60_000), 'minute'] : [Math.ceil(ms / 1_000), 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
};

/**
 * Why a call did not run, as the model reads it and can tell the user. The time people had is the
 * one the call was given (`timeoutMs` only stands in for a call asked about before that was kept).
 */
export function refusalReason(state: ApprovalState, platform: string, timeoutMs: number): string {
  const by = state.by ? ` ${person(platform, state.by)}` : ' the approver';
  if (state.note === STOPPED_NOTE)
    return 'The call was not run: the turn was stopped before anyone decided.';
  if (state.status === 'denied')
    return `The call was not run:${by} denied it${state.note ? ` (${state.note})` : ''}.`;
  const given = state.requestedAt
    ? state.expiresAt.getTime() - state.requestedAt.getTime()
    : timeoutMs;
  if (state.status === 'expired')
    return `The call was not run: nobody approved it within ${duration(given)}.`;
  return 'The call was approved, but Spool restarted while it was running, so whether it finished is unknown; it was not run again. Check before calling it again.';
}

export const STOPPED_CLICK_REPLY =
  'This request was stopped: its turn ended, so nothing waits for a decision and the call will not run.';

/** What the person who clicked is told, only when their click changed nothing. */
export function clickReply(outcome: ClickOutcome, platform: string): string | undefined {
  if (outcome.status === 'not_allowed') return 'You are not allowed to approve this call.';
  if (outcome.status === 'unknown') return 'This call is not waiting for a decision.';
  if (outcome.status === 'already' && outcome.state.note === STOPPED_NOTE)
    return STOPPED_CLICK_REPLY;
  if (outcome.status === 'already')
    return `This call was already ${outcome.state.status}${outcome.state.by ? ` by ${person(platform, outcome.state.by)}` : ''}.`;
  return undefined;
}
