import type { LaneKey } from '../ports/inbox.ts';

/** Who may use Spool on a platform; an absent list allows everyone. */
export interface Access {
  workspaces?: string[];
  channels?: string[];
  users?: string[];
  /** Any one of these roles suffices. */
  roles?: string[];
}

export function permits(access: Access, who: { lane: Pick<LaneKey, 'workspace' | 'channel'>; user: string; roles?: string[] }): boolean {
  const { workspaces, channels, users, roles } = access;
  if (workspaces && !workspaces.includes(who.lane.workspace)) return false;
  if (channels && !channels.includes(who.lane.channel)) return false;
  if (users && !users.includes(who.user)) return false;
  return !roles || (who.roles ?? []).some((r) => roles.includes(r));
}
