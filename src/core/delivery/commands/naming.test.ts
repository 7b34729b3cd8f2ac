import { describe, expect, it } from 'vitest';
import { namingFor } from './naming.ts';

describe('namingFor', () => {
  it('names channels and people as mentions on Slack and Discord, as ids in the console', () => {
    for (const platform of ['slack', 'discord']) {
      expect(namingFor(platform).channel('C1')).toBe('<#C1>');
      expect(namingFor(platform).person('U1')).toBe('<@U1>');
    }
    expect(namingFor('console').channel('local')).toBe('local');
    expect(namingFor('console').person('local')).toBe('local');
  });
});
