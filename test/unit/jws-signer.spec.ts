import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  exportJWK,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
} from 'jose';
import { JwsSigner, type SigningAlg } from '../../src/platform/keys/jws-signer';
import { KeyRing } from '../../src/platform/keys/key-ring';

const newKey = (alg: SigningAlg): KeyObject =>
  alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

async function privateJwk(alg: SigningAlg, kid: string): Promise<JWK> {
  return { ...(await exportJWK(newKey(alg))), alg, use: 'sig', kid };
}

/** The public half, as a verifier outside the service would import it. */
async function publicKeyOf(jwk: JWK, alg: SigningAlg) {
  const { kty, n, e, crv, x, y } = jwk;
  return importJWK({ kty, n, e, crv, x, y, alg }, alg);
}

const payload: JWTPayload = {
  iss: 'https://auth.example.test/t/acme',
  sub: 'usr_1',
  aud: 'cli_game',
  iat: 1_700_000_000,
  exp: 4_000_000_000,
  scope: 'openid offline_access',
  guest: true,
  // Claims are UTF-8 JSON (RFC 7519 section 7.1), whatever their characters.
  name: 'Zoë 🎮',
};

describe('JwsSigner: every token the service signs verifies with jose (issue 24)', () => {
  const jwks = new Map<SigningAlg, JWK>();

  beforeAll(async () => {
    jwks.set('RS256', await privateJwk('RS256', 'rs-1'));
    jwks.set('ES256', await privateJwk('ES256', 'es-1'));
  });

  const signerOf = (alg: SigningAlg): JwsSigner => {
    const jwk = jwks.get(alg) as JWK;
    return new JwsSigner(alg, jwk.kid as string, createPrivateKey({ key: jwk, format: 'jwk' }));
  };

  it.each<[SigningAlg, string]>([
    ['RS256', 'at+jwt'],
    ['ES256', 'at+jwt'],
    ['ES256', 'JWT'],
  ])('%s, typ %s: verifies against the public JWK, header exactly {alg, typ, kid}', async (alg, typ) => {
    const jwk = jwks.get(alg) as JWK;
    const token = signerOf(alg).sign(typ, payload);
    expect(decodeProtectedHeader(token)).toStrictEqual({ alg, typ, kid: jwk.kid });
    const verified = await jwtVerify(token, await publicKeyOf(jwk, alg), { algorithms: [alg], typ });
    expect(verified.payload).toStrictEqual(payload);
    expect(verified.protectedHeader).toStrictEqual({ alg, typ, kid: jwk.kid });
  });

  it.each<SigningAlg>(['RS256', 'ES256'])(
    'a %s token fails verification under another key of the same kind',
    async (alg) => {
      const token = signerOf(alg).sign('at+jwt', payload);
      const other = await privateJwk(alg, 'other');
      await expect(jwtVerify(token, await publicKeyOf(other, alg), { algorithms: [alg] })).rejects.toBeInstanceOf(
        errors.JWSSignatureVerificationFailed,
      );
    },
  );

  it('an RS256 token is byte for byte the one jose makes (PKCS#1 v1.5 signatures are deterministic)', async () => {
    const jwk = jwks.get('RS256') as JWK;
    const byJose = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: jwk.kid })
      .sign(await importJWK(jwk, 'RS256'));
    expect(signerOf('RS256').sign('at+jwt', payload)).toBe(byJose);
  });

  it('an ES256 token signs the same input as jose, with a 64-byte R || S signature (RFC 7518 3.4)', async () => {
    const jwk = jwks.get('ES256') as JWK;
    const byJose = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwk.kid })
      .sign(await importJWK(jwk, 'ES256'));
    const [header, claims, signature] = signerOf('ES256').sign('at+jwt', payload).split('.');
    expect(`${header}.${claims}`).toBe(byJose.split('.').slice(0, 2).join('.'));
    expect(Buffer.from(signature as string, 'base64url')).toHaveLength(64);
  });

  it('ES256 signatures whose R or S is shorter than 32 bytes are padded and verify', async () => {
    // DER drops an integer's leading zero bytes; R || S must keep each at 32 bytes. About one
    // signature in 128 has such an R or S, so 2,000 make the case all but certain, and the test
    // counts that it was met.
    const jwk = jwks.get('ES256') as JWK;
    const key = await publicKeyOf(jwk, 'ES256');
    const signer = signerOf('ES256');
    let short = 0;
    for (let i = 0; i < 2000; i += 1) {
      const token = signer.sign('at+jwt', { ...payload, jti: String(i) });
      const signature = Buffer.from(token.split('.')[2] as string, 'base64url');
      expect(signature).toHaveLength(64);
      if (signature[0] === 0 || signature[32] === 0) short += 1;
      await expect(jwtVerify(token, key, { algorithms: ['ES256'] })).resolves.toBeDefined();
    }
    expect(short).toBeGreaterThan(0);
  });

  it.each<[string, SigningAlg, () => KeyObject]>([
    [
      'an RSA key shorter than 2048 bits',
      'RS256',
      () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey,
    ],
    ['an EC key for RS256', 'RS256', () => newKey('ES256')],
    ['an RSA key for ES256', 'ES256', () => newKey('RS256')],
    ['a P-384 key for ES256', 'ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
    ['a public key', 'ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
  ])('refuses %s', (_name, alg, key) => {
    expect(() => new JwsSigner(alg, 'k', key())).toThrow(/too weak or of the wrong type/);
  });

  describe('through the KeyRing, against the JWKS the service serves', () => {
    let ring: KeyRing;

    beforeAll(async () => {
      ring = await KeyRing.load({
        signingKeys: [jwks.get('RS256') as JWK, jwks.get('ES256') as JWK, await privateJwk('ES256', 'es-2')],
      });
    });

    it.each<[SigningAlg, string, string]>([
      ['RS256', 'at+jwt', 'rs-1'],
      ['ES256', 'at+jwt', 'es-1'],
      ['ES256', 'JWT', 'es-1'],
    ])('%s (typ %s) is signed by the first key, %s, and verifies', async (alg, typ, kid) => {
      const token = await ring.sign(alg, typ, payload);
      const { payload: verified, protectedHeader } = await jwtVerify(token, createLocalJWKSet(ring.jwks(alg)), {
        algorithms: [alg],
        typ,
      });
      expect(protectedHeader).toStrictEqual({ alg, typ, kid });
      expect(verified).toStrictEqual(payload);
    });

    it("an ES256 token fails under the control plane's RS256 JWKS", async () => {
      const token = await ring.sign('ES256', 'at+jwt', payload);
      await expect(jwtVerify(token, createLocalJWKSet(ring.jwks('RS256')))).rejects.toBeInstanceOf(
        errors.JWKSNoMatchingKey,
      );
    });
  });
});
