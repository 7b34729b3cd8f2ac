import { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dpopSession, type StoredDpopKey } from './dpop-key.ts';

const decode = (part: string) =>
  JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;

describe('dpopSession', () => {
  it('keeps the key it makes, and signs with the same key after a restart', async () => {
    let stored: StoredDpopKey | undefined;
    const first = await dpopSession(undefined, async (key) => void (stored = key));
    expect(stored?.d).toBeTruthy();
    const again = await dpopSession(stored, () => Promise.reject(new Error('stored again')));
    // The token's cnf.jkt binds it to this thumbprint: a restart must not change it.
    expect(again.thumbprint).toBe(first.thumbprint);
    expect(again.publicJwk).toEqual(first.publicJwk);
    const proof = await again.buildProof({
      htm: 'post',
      htu: 'https://mcp.test/mcp?x=1',
      accessToken: 't',
    });
    const [header, payload, signature] = proof.split('.');
    const { jwk, typ, alg } = decode(header!);
    expect({ typ, alg }).toEqual({ typ: 'dpop+jwt', alg: 'ES256' });
    expect(decode(payload!)).toMatchObject({ htm: 'POST', htu: 'https://mcp.test/mcp' });
    // Signed by the stored private key: its public half verifies the proof.
    const key = await webcrypto.subtle.importKey(
      'jwk',
      jwk as webcrypto.JsonWebKey,
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['verify'],
    );
    const valid = await webcrypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      Buffer.from(signature!, 'base64url'),
      new TextEncoder().encode(`${header}.${payload}`),
    );
    expect(valid).toBe(true);
  });
});
