import type { ChannelScope } from '../conversation.ts';

/** A workspace of Spool's: its id, and its name where the platform says one (anyone's text). */
export interface Workspace {
  id: string;
  name?: string;
}

/**
 * Whether a person may read a channel on its platform now, as the platform says (implemented by
 * each adapter): Slack's membership (a direct message's own person is its member), Discord's view
 * permission for the member's roles. Spool's web pages show a channel's records only where this
 * says yes.
 */
export interface ChannelAccess {
  /** False for a channel the platform does not know or will not say of; never throws for that. */
  canRead(user: string, channel: ChannelScope): Promise<boolean>;
  /**
   * The workspaces Spool is in that `user` is a member of now, on a platform whose sign-in names
   * none (Discord: the servers); the operator pages show one of them. Empty when the platform will
   * not say.
   */
  workspacesOf?(user: string): Promise<Workspace[]>;
  /**
   * The workspace direct messages are recorded under where they are in none of the platform's
   * workspaces (Discord's `dm`). Each is its own person's: the operator pages show anyone there,
   * an admin too, their own alone.
   */
  readonly directMessages?: string;
}
