/** Whom a sign-in belongs to: a person of one workspace of one platform. */
export interface Person {
  platform: string;
  workspace: string;
  /** Their platform user id. */
  user: string;
}

/** A person's sign-in to a server used with each person's own account, as it is listed. */
export interface SignInListing {
  server: string;
  user: string;
  updatedAt: Date;
}

/** A sign-in link for a person; or why there is none. */
export type SignInLink = { url: string } | 'signed_in' | 'unknown';

/** People's sign-ins to MCP servers used with each person's own account (src/tools/mcp/sign-in/sign-in.ts). */
export interface SignInPort {
  /** The sign-ins in a workspace: one person's, or everyone's when `user` is not given. */
  logins(where: { platform: string; workspace: string; user?: string }): Promise<SignInListing[]>;
  /**
   * A link for the person to sign in to `server` ahead of any call, to be shown to them alone:
   * 'signed_in' when they are already, 'unknown' for a server not used with each person's sign-in.
   */
  link(server: string, person: Person): Promise<SignInLink>;
  /** Ends a person's sign-in to `server`; false when there was none. */
  logout(server: string, person: Person): Promise<boolean>;
}
