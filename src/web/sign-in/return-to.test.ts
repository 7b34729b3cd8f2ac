import { describe, expect, it } from 'vitest';
import { returnPath } from './return-to.ts';

describe('returnPath', () => {
  it("returns to Spool's own pages as asked", () => {
    for (const page of [
      '/web/results/call_0123',
      '/web/results/17?page=3&q=needle',
      '/web/search?q=a%20b',
      '/web/usage?workspace=400000000000000001',
      '/web/',
    ])
      expect(returnPath(page), page).toBe(page);
  });

  it('refuses every address off Spool, plain or encoded, and nothing asked', () => {
    for (const hostile of [
      null,
      undefined,
      '',
      'https://evil.example/web/x',
      '//evil.example/web/x',
      '/\\evil.example',
      '\\\\evil.example',
      '/web\\..\\..\\evil',
      '/web/\\evil',
      '/web//evil.example',
      '/web/%2F%2Fevil.example',
      '/web/%2f%2fevil.example',
      '/web/%5Cevil',
      '/web/%5cevil',
      '/%2F%2Fevil.example',
      '/web/%E0%A4%A',
      '/web/../evil',
      '/web/%2E%2E/evil',
      '/web/./results/1',
      'javascript:alert(1)',
      '/web/x\nLocation: https://evil',
      '/web/x%0d%0aSet-Cookie:a=b',
      '/web/x\tz',
      '/web/ x',
      '/webevil',
      '/elsewhere',
      `/web/${'a'.repeat(2_000)}`,
    ])
      expect(returnPath(hostile), String(hostile)).toBeUndefined();
  });

  it('never returns to a sign-in, the local key or sign-out', () => {
    for (const loop of [
      '/web/sign-in',
      '/web/sign-in?to=/web/',
      '/web/sign-in/discord',
      '/web/local?key=k',
      '/web/sign-out',
    ])
      expect(returnPath(loop), loop).toBeUndefined();
    expect(returnPath('/web/sign-ins')).toBe('/web/sign-ins');
  });
});
