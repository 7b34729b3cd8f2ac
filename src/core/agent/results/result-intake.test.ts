import { describe, expect, it } from 'vitest';
import { secretMasker } from '../../redact.ts';
import { admitResult, type ResultIntake } from './result-intake.ts';

const intake: ResultIntake = {
  storeMaxChars: 100,
  maskSecrets: secretMasker(['hunter2-secret']),
  redactSecretPatterns: false,
};
const admit = (content: string, overrides: Partial<ResultIntake> = {}) =>
  admitResult({ content, isError: false }, { ...intake, ...overrides }).content;

describe('admitResult', () => {
  it('keeps a result up to the cap, then says how much there was', () => {
    expect(admit('y'.repeat(100))).toBe('y'.repeat(100));
    expect(admit('y'.repeat(250))).toBe(
      `${'y'.repeat(100)}\n[Spool stored only the first 100 of 250 chars of this result (TOOL_RESULT_STORE_MAX_CHARS)]`,
    );
  });

  it('never cuts a surrogate pair at the cap', () => {
    const kept = admit(`${'y'.repeat(99)}😀${'z'.repeat(10)}`);
    expect(kept.startsWith(`${'y'.repeat(99)}\n`)).toBe(true);
  });

  it("masks the bot's own secrets, escaped or not, whatever the setting", () => {
    const echoed = `TOKEN=hunter2-secret ${JSON.stringify({ env: 'x"hunter2-secret' })}`;
    expect(admit(echoed, { storeMaxChars: 1_000 })).toBe(
      'TOKEN=[redacted] {"env":"x\\"[redacted]"}',
    );
  });

  it('redacts known credential formats only when asked to', () => {
    const leaked = 'aws AKIAIOSFODNN7EXAMPLE gh ghp_0123456789abcdefghijklmnopqrstuvwxyzAB ok';
    expect(admit(leaked, { storeMaxChars: 1_000 })).toBe(leaked);
    expect(admit(leaked, { storeMaxChars: 1_000, redactSecretPatterns: true })).toBe(
      'aws [redacted AWS access key] gh [redacted GitHub token] ok',
    );
  });

  it('says a result held NUL bytes', () => {
    expect(admit('a\u0000b')).toBe(
      'a\u0000b\n[This result held NUL bytes, so it looks binary: each was replaced by U+FFFD.]',
    );
  });
});
