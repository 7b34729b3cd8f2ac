import type { ApprovalPort } from '../ports/approvals.ts';
import type { InboxEntry } from '../ports/delivery.ts';
import type { Outbound } from '../ports/platform.ts';
import type { SignInGate } from '../ports/turns.ts';
import { interruptedCallMarker } from '../markers.ts';
import { duration, person } from './approval-text.ts';

/**
 * A turn's calls that wait for the person who asked to sign in to a server as themselves. The wait
 * is kept on the call's row as an approval's is (its deadline; started once), so it outlives a
 * restart and any replica takes it up; the person's sign-in wakes the message (the redirect
 * handler), and the call is made as them when the turn goes on.
 */
export function signInGate(
  approvals: ApprovalPort,
  entry: InboxEntry,
  outbound: Outbound,
  timeoutMs: number,
): SignInGate {
  const scope = entry.lane;
  const who = person(scope.platform, entry.user);
  return {
    async wait(call, { server, url, reason }) {
      const asked = await approvals.state(scope, call.id);
      let state = asked ?? (await approvals.request(scope, call.id, timeoutMs));
      // Once per call: the link goes to the person who asked, and to nobody else.
      if (!asked)
        await outbound
          .showPrivately?.(entry, signInRequest(server, reason, timeoutMs), {
            label: `Sign in to ${server}`,
            url,
          })
          .catch(() => {});
      if (state.status === 'pending')
        state = (await approvals.decide(scope, call.id, { status: 'expired' }))?.state ?? state;
      if (state.status === 'pending') return { until: state.expiresAt };
      if (state.status === 'expired')
        return {
          declined: `The call was not made: ${who} was asked to sign in to ${server} as themselves and did not within ${duration(timeoutMs)}. Tell them, and that asking again sends a new link.`,
        };
      return {
        // Already decided (an approval, or a sign-in that did not serve): not asked twice.
        declined: `The call was not made: ${who} has no sign-in to ${server} that serves it (${reason}). Tell them to sign in with /spool login ${server} (Discord and console: /login), then ask again.`,
      };
    },
    waiting: (ids) => approvals.waiting(scope, ids),
    async start(call) {
      // Taken up at its deadline, with no sign-in: it goes no further.
      const due = await approvals.decide(scope, call.id, { status: 'expired' });
      if (due?.state.status === 'expired')
        return { declined: `The call was not made: ${who} did not sign in in time.` };
      // Whether they signed in from the link or otherwise, the call goes on now, once.
      await approvals.decide(scope, call.id, {
        status: 'approved',
        by: entry.user,
        note: 'signed in',
      });
      if (await approvals.start(scope, call.id)) return true;
      return { declined: interruptedCallMarker(call.name) };
    },
  };
}

/** What the person who asked reads, alone, beside the link. */
function signInRequest(server: string, reason: string, timeoutMs: number): string {
  const why =
    reason === 'insufficient_scope'
      ? `needs more access to ${server} than you gave it`
      : `needs you to sign in to ${server} as yourself`;
  return `To go on, Spool ${why}. The link is yours alone: it works once, for ${duration(timeoutMs)}. Do not forward it. The answer follows in the thread once you are signed in.`;
}
