import { describe, expect, it } from 'vitest';
import { redactSecretPatterns, secretMasker } from './redact.ts';

describe('redactSecretPatterns', () => {
  it.each([
    [
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----',
      'private key',
    ],
    ['AKIAIOSFODNN7EXAMPLE', 'AWS access key'],
    ['github_pat_11ABCDEFG0123456789_abcdefghijklmnop', 'GitHub token'],
    ['xoxb-123456789012-abcdefghijkl', 'Slack token'],
    ['sk-proj-abcdefghijklmnopqrstuvwx', 'API key'],
    ['AIzaSyA1234567890abcdefghijklmnopqrstuv', 'Google API key'],
    ['sk_live_0123456789abcdefghijklmn', 'Stripe key'],
    [
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'JSON web token',
    ],
  ])('redacts %s', (secret, kind) => {
    expect(redactSecretPatterns(`before ${secret} after`)).toBe(`before [redacted ${kind}] after`);
  });

  it('finds keys beside punctuation and in JSON, and a private key spanning lines', () => {
    const text = `{"key":"AKIAIOSFODNN7EXAMPLE","n":1}. Token: xoxb-123456789012-abcdefghijkl.\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\ntail`;
    expect(redactSecretPatterns(text)).toBe(
      '{"key":"[redacted AWS access key]","n":1}. Token: [redacted Slack token].\n[redacted private key]\ntail',
    );
  });

  it('stays linear on text built to make a backtracking pattern crawl', () => {
    // Quadratic patterns took minutes on these; each is a few megabytes.
    const eyJ = '-eyJ'.repeat(500_000);
    const keys = '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(60_000);
    expect(redactSecretPatterns(eyJ)).toBe(eyJ);
    expect(redactSecretPatterns(keys)).toBe(keys);
    // One long token each, of a known format's shape: one redaction, not a crawl.
    expect(redactSecretPatterns(`x ${'sk-'.repeat(700_000)} y`)).toBe('x [redacted API key] y');
    expect(redactSecretPatterns(`x ${'github_pat_'.repeat(200_000)} y`)).toBe(
      'x [redacted GitHub token] y',
    );
  });

  it('leaves ordinary text, hashes and ids alone', () => {
    const text =
      'commit 3f0796c6d461c4 sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 sk-short task-1234567890';
    expect(redactSecretPatterns(text)).toBe(text);
  });
});

describe('secretMasker', () => {
  it('masks each secret in every JSON spelling, longest first, and skips values too short to be secrets', () => {
    const mask = secretMasker(['ab"c\\def', 'ab"c\\defgh', 'tiny']);
    const line = `ab"c\\defgh ${JSON.stringify('ab"c\\def')} ${JSON.stringify(JSON.stringify('ab"c\\def'))} tiny`;
    expect(mask(line)).toBe('[redacted] "[redacted]" "\\"[redacted]\\"" tiny');
  });
});
