/** What a thrown value says, whatever was thrown: an Error's message, or the value as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A call to a server used with each person's own sign-in, for a person who has none that serves
 * (never signed in, revoked, expired past refresh, or too narrow for the call): they are sent
 * `url` and the turn parks until they sign in.
 */
export class SignInRequiredError extends Error {
  constructor(
    readonly server: string,
    readonly url: string,
    readonly reason: 'none' | 'expired' | 'revoked' | 'insufficient_scope',
  ) {
    super(`Signing in to ${server} is needed first (${reason})`);
    this.name = 'SignInRequiredError';
  }
}
