import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, jwtVerify, type JWK } from 'jose';
import { KeyRing, type SigningAlg } from '../../src/platform/keys/key-ring';

async function privateJwk(alg: SigningAlg, kid: string, modulusLength = 2048): Promise<JWK> {
  const { privateKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...(await exportJWK(privateKey)), alg, use: 'sig', kid };
}

describe('KeyRing (contract 1): the first key of an algorithm signs, weak keys are refused', () => {
  let ring: KeyRing;

  beforeAll(async () => {
    const keys = [
      await privateJwk('RS256', 'rs-1'),
      await privateJwk('RS256', 'rs-2'),
      await privateJwk('ES256', 'es-1'),
      await privateJwk('ES256', 'es-2'),
    ];
    ring = await KeyRing.load({ signingKeys: keys });
  });

  it.each<[SigningAlg, string]>([
    ['RS256', 'rs-1'],
    ['ES256', 'es-1'],
  ])('%s tokens are signed by the first key and verify against the published JWKS', async (alg, kid) => {
    const payload = { sub: 'usr_x', aud: 'cli_a', iat: 1_700_000_000, exp: 4_000_000_000, scope: 'a b' };
    const token = await ring.sign(alg, 'at+jwt', payload);
    expect(decodeProtectedHeader(token)).toEqual({ alg, typ: 'at+jwt', kid });
    const verified = await jwtVerify(token, createLocalJWKSet(ring.jwks(alg)), { algorithms: [alg], typ: 'at+jwt' });
    expect(verified.payload).toEqual(payload);
  });

  it('resolves a verification key only by a kid of that algorithm: none for a missing, unknown or other-algorithm kid', () => {
    expect(ring.verificationKey('RS256', 'rs-2')).toBeDefined();
    expect(ring.verificationKey('ES256', 'es-2')).toBeDefined();
    expect(ring.verificationKey('RS256', undefined)).toBeUndefined();
    expect(ring.verificationKey('ES256', undefined)).toBeUndefined();
    expect(ring.verificationKey('RS256', 'rs-3')).toBeUndefined();
    expect(ring.verificationKey('RS256', 'es-1')).toBeUndefined();
  });

  it('refuses at load an RSA key shorter than 2048 bits (RFC 7518 3.3)', async () => {
    await expect(KeyRing.load({ signingKeys: [await privateJwk('RS256', 'rs-weak', 1024)] })).rejects.toThrow(
      /too weak/,
    );
  });
});
