import { describe, expect, it } from 'vitest';
import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';
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

/** A platform whose members are listed, and which counts how often it is asked. */
function platform(members: Record<string, string[]>) {
  const asked: string[] = [];
  const access: ChannelAccess = {
    canRead: async (user, where) => {
      asked.push(`${user}@${where.channel}`);
      if (where.channel === 'broken') throw new Error('platform down');
      return members[where.channel]?.includes(user) ?? false;
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
});
