import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose';
import { AccessTokenVerifier, type AccessTokenRules } from '../../src/platform/keys/access-token-verifier';
import { KeyRing } from '../../src/platform/keys/key-ring';

interface Claims {
  readonly sub: string;
  readonly exp: number;
}

const ISSUER = 'https://auth.example.test/t/acme';

describe('AccessTokenVerifier: the rules both realms share', () => {
  let keys: KeyRing;
  let privateKey: CryptoKey;
  const rules = (fits: (c: Claims) => boolean = () => true): AccessTokenRules<Claims> => ({
    issuer: ISSUER,
    requiredClaims: ['sub', 'exp', 'iat'],
    claimsOf: ({ sub, exp }) => (typeof sub === 'string' ? { sub, exp } : null),
    fits,
  });
  const now = (): number => Math.floor(Date.now() / 1000);
  const token = (payload: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> =>
    new SignJWT({ iss: ISSUER, sub: 'usr_1', iat: now(), exp: now() + 300, ...payload })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1', ...header })
      .sign(privateKey);

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.privateKey)), alg: 'ES256', kid: 'k1' };
    keys = await KeyRing.load({ signingKeys: [jwk] });
  });

  it('accepts a valid token and hands over the realm claims', async () => {
    await expect(new AccessTokenVerifier<Claims>(keys, 'ES256').verify(await token(), rules())).resolves.toMatchObject({
      sub: 'usr_1',
    });
  });

  it.each([
    ['jku', { jku: 'https://evil.example/keys' }],
    ['x5u', { x5u: 'https://evil.example/cert' }],
    ['jwk', { jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } }],
    ['x5c', { x5c: ['MIIB'] }],
    // b64 is the one extension jose itself understands, so only our rule refuses this token.
    ['crit', { crit: ['b64'], b64: true }],
  ])('refuses a token carrying the %s header', async (_name, header) => {
    await expect(
      new AccessTokenVerifier<Claims>(keys, 'ES256').verify(await token({}, header), rules()),
    ).resolves.toBeNull();
  });

  it('refuses another algorithm than the realm pins', async () => {
    await expect(new AccessTokenVerifier<Claims>(keys, 'RS256').verify(await token(), rules())).resolves.toBeNull();
  });

  it('allows 60 s of issuer clock skew on iat, not more, and no grace on exp', async () => {
    const verifier = new AccessTokenVerifier<Claims>(keys, 'ES256');
    await expect(verifier.verify(await token({ iat: now() + 50 }), rules())).resolves.not.toBeNull();
    await expect(verifier.verify(await token({ iat: now() + 90 }), rules())).resolves.toBeNull();
    await expect(verifier.verify(await token({ iat: now() - 100, exp: now() - 1 }), rules())).resolves.toBeNull();
  });

  it('refuses when the realm rules refuse, and a cached token that does not fit the request', async () => {
    const verifier = new AccessTokenVerifier<Claims>(keys, 'ES256');
    await expect(verifier.verify(await token({ sub: undefined }), rules())).resolves.toBeNull();
    const t = await token();
    await expect(verifier.verify(t, rules())).resolves.not.toBeNull();
    await expect(
      verifier.verify(
        t,
        rules(() => false),
      ),
    ).resolves.toBeNull();
  });
});
