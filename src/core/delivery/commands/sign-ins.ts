import type { SignInLink, SignInListing } from '../../ports/parked/sign-ins.ts';
import type { Naming } from '../../ports/spend.ts';

/** Where no tool server is used with each person's own sign-in (or PUBLIC_URL is not set). */
export const NO_PERSONAL_SERVERS = "No tool server here is used with each person's own sign-in.";

/** `/spool logins`: the person's sign-ins, or everyone's for an operator, as text. */
export function loginsText(
  listings: SignInListing[],
  { everyone, names }: { everyone: boolean; names: Naming },
): string {
  if (listings.length === 0)
    return everyone
      ? 'Nobody here is signed in to a tool server.'
      : 'You are not signed in to any tool server.';
  const lines = listings.map(
    (l) =>
      `• ${l.server}${everyone ? `: ${names.person(l.user)}` : ''}, since ${l.updatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  );
  return [everyone ? 'Sign-ins to tool servers here:' : 'You are signed in to:', ...lines].join(
    '\n',
  );
}

/** What `/spool logout SERVER [person]` asks: the server, and whose sign-in (none: one's own). */
export function logoutArguments(text: string): { server: string; whose?: string } | undefined {
  const [server, whose, ...rest] = text.trim().split(/\s+/).filter(Boolean);
  if (!server || rest.length > 0) return undefined;
  // A mention as Slack and Discord write it (`<@U1>`, `<@!1>`, `<@U1|name>`), or a bare id.
  const user = whose?.replace(/^<@!?([^>|]+)(?:\|[^>]*)?>$/, '$1');
  return user ? { server, whose: user } : { server };
}

/** What a logout says, to the person who asked. */
export function logoutText(
  ended: boolean,
  server: string,
  whose: string | undefined,
  names: Naming,
): string {
  const who = whose ? `${names.person(whose)} is` : 'You are';
  return ended
    ? `${who} signed out of ${server}; a later call asks to sign in again.`
    : `${who} not signed in to ${server}.`;
}

/** What `/spool login SERVER` answers, to the person alone: the link, or why there is none. */
export function loginText(server: string, link: SignInLink): string {
  if (link === 'unknown')
    return `${server || 'That'} is not a tool server used with each person's own sign-in here.`;
  if (link === 'signed_in') return `You are signed in to ${server} already.`;
  return `Sign in to ${server} as yourself (this link is yours alone: it works once, and only for a few minutes; do not forward it): ${link.url}`;
}
