import { describe, expect, it } from 'vitest';
import type { ChannelAccess, Workspace } from '../../core/ports/platform/channel-access.ts';
import type { ChannelScope } from '../../core/ports/conversation.ts';
import { Access } from './access.ts';
import type { Viewer } from '../layout.ts';

const viewer = (over: Partial<Viewer> = {}): Viewer => ({
  platform: 'slack',
  workspace: 'T1',
  user: 'U1',
  admin: false,
  csrf: 'c',
  session: 's',
  ...over,
});

const channel = (over: Partial<ChannelScope> = {}): ChannelScope => ({
  platform: 'slack',
  workspace: 'T1',
  channel: 'C1',
  ...over,
});

/**
 * A platform whose channels' members and workspaces' members are listed, and which counts how
 * often it is asked.
 */
function platform(members: Record<string, string[]>, workspaces: Record<string, Workspace[]> = {}) {
  const asked: string[] = [];
  const access: ChannelAccess = {
    canRead: async (user, where) => {
      asked.push(`${user}@${where.channel}`);
      if (where.channel === 'broken') throw new Error('platform down');
      return members[where.channel]?.includes(user) ?? false;
    },
    workspacesOf: async (user) => {
      asked.push(`${user}'s workspaces`);
      if (user === 'broken') throw new Error('platform down');
      return workspaces[user] ?? [];
    },
  };
  return { access, asked };
}

describe('Access', () => {
  it('shows a channel only to its members, as the platform says', async () => {
    const { access } = platform({ C1: ['U1'], D9: ['U2'] });
    const rules = new Access(new Map([['slack', access]]));
    expect(await rules.mayRead(viewer(), channel())).toBe(true);
    expect(await rules.mayRead(viewer(), channel({ channel: 'C2' }))).toBe(false);
    // A direct message: only its own person.
    expect(await rules.mayRead(viewer(), channel({ channel: 'D9' }))).toBe(false);
    expect(await rules.mayRead(viewer({ user: 'U2' }), channel({ channel: 'D9' }))).toBe(true);
  });

  it('shows nobody another workspace or platform, admins included', async () => {
    const { access } = platform({ C1: ['U1'] });
    const rules = new Access(new Map([['slack', access]]));
    const admin = viewer({ admin: true });
    expect(await rules.mayRead(admin, channel({ workspace: 'T2' }))).toBe(false);
    expect(await rules.mayRead(admin, channel({ platform: 'discord' }))).toBe(false);
    expect(await rules.mayRead(admin, channel({ channel: 'C-not-a-member' }))).toBe(true);
  });

  it('refuses where the platform cannot say, or is not running', async () => {
    const { access } = platform({});
    expect(
      await new Access(new Map([['slack', access]])).mayRead(
        viewer(),
        channel({ channel: 'broken' }),
      ),
    ).toBe(false);
    expect(await new Access(new Map()).mayRead(viewer(), channel())).toBe(false);
  });

  it('asks the platform about a person and a channel once a minute', async () => {
    const { access, asked } = platform({ C1: ['U1'] });
    const rules = new Access(new Map([['slack', access]]));
    await rules.mayRead(viewer(), channel());
    await rules.mayRead(viewer(), channel());
    expect(asked).toEqual(['U1@C1']);
  });

  it('asks every server of Discord about a sign-in that names none', async () => {
    const { access } = platform({ C1: ['U1'] });
    const rules = new Access(new Map([['discord', access]]));
    const discord = viewer({ platform: 'discord', workspace: '' });
    const readable = await rules.readable(discord, [
      channel({ platform: 'discord', workspace: 'G1' }),
      channel({ platform: 'discord', workspace: 'G2', channel: 'C2' }),
    ]);
    expect(readable).toEqual([channel({ platform: 'discord', workspace: 'G1' })]);
  });

  it("shows a Discord admin their own servers' channels alone, and asks for their servers once a minute", async () => {
    const { access, asked } = platform({}, { U1: [{ id: 'G1', name: 'one' }, { id: 'G3' }] });
    const rules = new Access(new Map([['discord', access]]));
    const admin = viewer({ platform: 'discord', workspace: '', admin: true });
    const at = (workspace: string) => channel({ platform: 'discord', workspace, channel: 'C9' });
    expect(await rules.mayRead(admin, at('G1'))).toBe(true);
    expect(await rules.mayRead(admin, at('G3'))).toBe(true);
    // Another server's channel: as anyone's, by the platform's word (no: not a member of C9).
    expect(await rules.mayRead(admin, at('G2'))).toBe(false);
    expect(await rules.workspaces(admin)).toEqual([{ id: 'G1', name: 'one' }, { id: 'G3' }]);
    expect(asked.filter((a) => a.endsWith('workspaces'))).toEqual(["U1's workspaces"]);
  });

  it("names a sign-in's own workspace, and none where the platform cannot say", async () => {
    const { access } = platform({}, { U1: [{ id: 'G1' }] });
    const rules = new Access(new Map([['discord', access]]));
    expect(await rules.workspaces(viewer())).toEqual([{ id: 'T1' }]);
    const discord = viewer({ platform: 'discord', workspace: '' });
    expect(await rules.workspaces({ ...discord, user: 'broken' })).toEqual([]);
    expect(await new Access(new Map()).workspaces(discord)).toEqual([]);
    const unsaid = new Access(new Map([['discord', { canRead: platform({}).access.canRead }]]));
    expect(await unsaid.workspaces(discord)).toEqual([]);
  });
});
