import { describe, expect, it } from 'vitest';
import { callbackFromPaste } from './oauth.ts';

describe('what an operator pastes after logging in', () => {
  it('takes the code, and the issuer the authorization server named (RFC 9207), from the address', () => {
    expect(
      callbackFromPaste(
        ' http://127.0.0.1:33418/callback?code=c%2B1&state=s&iss=https%3A%2F%2Fauth.example.com \n',
      ),
    ).toEqual({ code: 'c+1', iss: 'https://auth.example.com' });
    expect(callbackFromPaste('http://127.0.0.1:33418/callback?code=c1')).toEqual({ code: 'c1' });
  });

  it('takes a code pasted alone, and nothing from an address without one', () => {
    expect(callbackFromPaste('c1\n')).toEqual({ code: 'c1' });
    expect(
      callbackFromPaste('http://127.0.0.1:33418/callback?error=access_denied'),
    ).toBeUndefined();
    expect(callbackFromPaste('  ')).toBeUndefined();
  });
});
