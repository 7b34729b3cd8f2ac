import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, seal } from './oauth-vault.ts';

describe('sealed OAuth records', () => {
  const key = randomBytes(32);
  const record = JSON.stringify({ tokens: { access_token: 'at-0123456789abcdef' } });

  it('open with the key and the server they were sealed for, and hold no token in clear', () => {
    const sealed = seal(record, key, 'github');
    expect(sealed).not.toContain('at-0123456789abcdef');
    expect(open(sealed, key, 'github')).toBe(record);
    expect(seal(record, key, 'github')).not.toBe(sealed);
  });

  it('do not open under another key, for another server, or altered', () => {
    const sealed = seal(record, key, 'github');
    expect(() => open(sealed, randomBytes(32), 'github')).toThrow(/MCP_OAUTH_KEY/);
    expect(() => open(sealed, key, 'jira')).toThrow(/MCP_OAUTH_KEY/);
    const [version, iv, tag, body] = sealed.split('.');
    const flipped = Buffer.from(body!, 'base64');
    flipped[0]! ^= 1;
    expect(() =>
      open([version, iv, tag, flipped.toString('base64')].join('.'), key, 'github'),
    ).toThrow();
    expect(() => open('not sealed', key, 'github')).toThrow(/not sealed/);
  });
});
