import type { Access, Asker, Outbound } from '../../ports/platform/platform.ts';
import { permits } from './access.ts';
import { policyFor, type Policy } from './policy.ts';

export interface RegisteredPlatform {
  outbound: Outbound;
  access: Access;
}

/**
 * The platforms registered with the engine: what each posts through, and who may talk to Spool
 * there (its allow-lists, under the channel's policy).
 */
export class Platforms {
  private readonly byName = new Map<string, RegisteredPlatform>();

  constructor(private readonly policy: Policy | undefined) {}

  register(name: string, outbound: Outbound, access: Access): void {
    this.byName.set(name, { outbound, access });
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  get(name: string): RegisteredPlatform {
    const platform = this.byName.get(name);
    if (!platform) throw new Error(`No outbound registered for platform "${name}"`);
    return platform;
  }

  /** Whether `workspace` is its platform's direct messages', where each person is their own admin. */
  isDirectMessages({ platform, workspace }: { platform: string; workspace: string }): boolean {
    return this.byName.get(platform)?.access.directMessages === workspace;
  }

  /**
   * The platform's allow-lists, with the users or roles the channel's policy names in place of its
   * own.
   */
  permits(who: Asker): boolean {
    const { users, roles } = policyFor(this.policy, who.lane);
    return permits(
      {
        ...this.get(who.lane.platform).access,
        ...(users ? { users } : {}),
        ...(roles ? { roles } : {}),
      },
      who,
    );
  }
}
