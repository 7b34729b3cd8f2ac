import { createHash, webcrypto } from 'node:crypto';
import { DpopSession, generateDpopKeyPair, type DpopKeyPair } from '@modelcontextprotocol/client';

/** A DPoP key as the vault keeps it, sealed with the rest of the record: its private JWK. */
export type StoredDpopKey = webcrypto.JsonWebKey;

const ES256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/**
 * A DPoP session on the key Spool's tokens are bound to. The key outlives the process (the token
 * the authorization server bound to it does too), so it is made exportable and kept in the vault;
 * `store` is called once, when a key is first made.
 */
export async function dpopSession(
  stored: StoredDpopKey | undefined,
  store: (key: StoredDpopKey) => Promise<void>,
): Promise<DpopSession> {
  if (stored) return DpopSession.create({ keyPair: await importKeyPair(stored) });
  const keyPair = await generateDpopKeyPair({ alg: 'ES256', extractable: true });
  await store(await webcrypto.subtle.exportKey('jwk', keyPair.privateKey));
  return DpopSession.create({ keyPair });
}

async function importKeyPair(privateJwk: StoredDpopKey): Promise<DpopKeyPair> {
  const { kty, crv, x, y } = privateJwk;
  // RFC 7638: the thumbprint hashes the required members, in lexicographic order.
  const publicJwk = { crv, kty, x, y };
  return {
    privateKey: await webcrypto.subtle.importKey('jwk', privateJwk, ES256, false, ['sign']),
    publicKey: await webcrypto.subtle.importKey('jwk', publicJwk, ES256, true, ['verify']),
    publicJwk,
    thumbprint: createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url'),
    alg: 'ES256',
  };
}
