import { describe, expect, it } from 'vitest';
import { permits } from './access.ts';

const who = (workspace: string, channel: string, user: string, roles?: string[]) => ({
  lane: { workspace, channel },
  user,
  roles,
});

describe('permits', () => {
  it('allows everyone when no list is set', () => {
    expect(permits({}, who('T1', 'C1', 'U1'))).toBe(true);
  });

  it('requires every list that is set', () => {
    const access = { workspaces: ['T1'], channels: ['C1'], users: ['U1'] };
    expect(permits(access, who('T1', 'C1', 'U1'))).toBe(true);
    expect(permits(access, who('T2', 'C1', 'U1'))).toBe(false);
    expect(permits(access, who('T1', 'C2', 'U1'))).toBe(false);
    expect(permits(access, who('T1', 'C1', 'U2'))).toBe(false);
  });

  it('takes any one allowed role, and no roles as none', () => {
    const access = { roles: ['admin', 'ops'] };
    expect(permits(access, who('G', 'C', 'U', ['member', 'ops']))).toBe(true);
    expect(permits(access, who('G', 'C', 'U', ['member']))).toBe(false);
    expect(permits(access, who('G', 'C', 'U'))).toBe(false);
  });
});
