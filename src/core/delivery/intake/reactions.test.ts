import { describe, expect, it } from 'vitest';
import type { Policy } from '../rules/policy.ts';
import { reactionKey, reactionPrompt, reactionRequest } from './reactions.ts';

const place = { platform: 'discord', workspace: 'G1', channel: 'C1' };
const policy: Policy = {
  rules: [
    { match: {}, reactions: { '👍': 'Summarise it', '❤': 'Thank them', mag: 'Look into it' } },
    { match: { channel: 'C2' }, reactions: { eyes: 'Elsewhere only' } },
  ],
};

describe('reactionPrompt', () => {
  it('finds the prompt of an emoji in the channel’s policy, a skin tone or a variation selector being the same emoji', () => {
    expect(reactionPrompt(policy, place, '👍🏾')).toBe('Summarise it');
    expect(reactionPrompt(policy, place, '❤️')).toBe('Thank them');
    expect(reactionPrompt(policy, place, 'mag')).toBe('Look into it');
    expect(reactionPrompt(policy, place, 'eyes')).toBeUndefined();
    expect(reactionPrompt(undefined, place, 'mag')).toBeUndefined();
  });
});

describe('reactionRequest', () => {
  it('asks the prompt with the message quoted, keyed by the message, the person and the emoji', () => {
    const lane = { ...place, thread: 'main' };
    const reaction = { lane, user: 'U1', roles: ['R1'], emoji: '👍🏽', on: 'C1:M1' };
    const reacted = { author: 'U2', text: 'Disk at 97%\non db-1' };
    expect(reactionRequest(reaction, 'Summarise it', reacted, { messageId: 'M1' })).toEqual({
      lane,
      messageKey: 'reaction:C1:M1:U1:👍',
      kind: 'message',
      user: 'U1',
      roles: ['R1'],
      text: 'Summarise it\n\nThe message (from <@U2>):\n> Disk at 97%\n> on db-1',
      delivery: { messageId: 'M1' },
    });
    expect(reactionKey(reaction)).toBe(reactionKey({ ...reaction, emoji: '👍' }));
  });
});
