import type { Person } from '../parked/sign-ins.ts';

/**
 * A chat platform's own sign-in (Sign in with Slack; Discord's OAuth2 with `identify`). It tells
 * who holds a browser, so that a sign-in link is followed only by the person it was sent to.
 */
export interface PlatformSignIn {
  /**
   * Where the browser signs in with the platform; it comes back to `redirectUrl` with a code. With
   * `person`, straight to their workspace where the platform can say so.
   */
  authorizationUrl(options: { state: string; redirectUrl: string; person?: Person }): string;
  /**
   * Who signed in with the platform, whose code this is (the web pages' sign-in). A Discord user is
   * the same in every server: its workspace is ''. Throws when the platform does not take the code.
   */
  identify(code: string, redirectUrl: string): Promise<Person>;
  /**
   * Whether whoever signed in with the platform, whose code this is, is `person` (of their
   * workspace, where ids are a workspace's). Throws when the platform does not take the code.
   */
  isPerson(person: Person, code: string, redirectUrl: string): Promise<boolean>;
}
