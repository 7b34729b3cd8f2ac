import type { LaneKey } from '../../ports/platform/delivery.ts';
import type { Access } from '../../ports/platform/platform.ts';

export function permits(
  access: Access,
  who: { lane: Pick<LaneKey, 'workspace' | 'channel'>; user: string; roles?: string[] },
): boolean {
  const { workspaces, channels, users, roles } = access;
  if (workspaces && !workspaces.includes(who.lane.workspace)) return false;
  if (channels && !channels.includes(who.lane.channel)) return false;
  if (users && !users.includes(who.user)) return false;
  return !roles || (who.roles ?? []).some((r) => roles.includes(r));
}
