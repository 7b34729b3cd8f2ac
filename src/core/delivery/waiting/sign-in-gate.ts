import type { ApprovalPort } from '../../ports/parked/approvals.ts';
import type { InboxEntry } from '../../ports/platform/delivery.ts';
import type { SignInGate } from '../../ports/turns.ts';
import { interruptedCallMarker } from '../../markers.ts';
import { duration, person } from '../posts/approval-text.ts';

/**
 * A turn's calls that wait for the person who asked to sign in to a server as themselves. The wait
 * is kept on the call's row as an approval's is (its deadline; started once), so it outlives a
 * restart and any replica takes it up; the link goes to the person once the message waits
 * (`Parking.park`), their sign-in wakes it (the redirect handler), and the call is made as them
 * when the turn goes on.
 */
export function signInGate(
  approvals: ApprovalPort,
  entry: InboxEntry,
  timeoutMs: number,
): SignInGate {
  const scope = entry.lane;
  const who = person(scope.platform, entry.user);
  return {
    async wait(call, { server, reason }) {
      let state = await approvals.request(scope, call.id, timeoutMs);
      if (state.status === 'pending')
        state = (await approvals.decide(scope, call.id, { status: 'expired' }))?.state ?? state;
      if (state.status === 'pending') return { until: state.expiresAt };
      if (state.status === 'expired')
        return {
          declined: notSignedIn(who, server, timeoutMs),
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
        return { declined: notSignedIn(who, `the server of ${call.name}`, timeoutMs) };
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

/** What the model reads of a call whose person did not sign in in time. */
const notSignedIn = (who: string, server: string, timeoutMs: number) =>
  `The call was not made: ${who} was asked to sign in to ${server} as themselves and did not within ${duration(timeoutMs)}. Tell them, and that asking again sends a new link.`;

/** What the person who asked reads, alone, beside the link good for `ms` more. */
export function signInRequest(server: string, reason: string, ms: number): string {
  const why =
    reason === 'insufficient_scope'
      ? `needs more access to ${server} than you gave it`
      : `needs you to sign in to ${server} as yourself`;
  return `To go on, Spool ${why}. The link is yours alone: it works once, for ${duration(ms)}. Do not forward it. The answer follows in the thread once you are signed in.`;
}
