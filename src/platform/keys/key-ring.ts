import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { exportJWK, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { AppConfig } from '../../config/config';

export type SigningAlg = 'RS256' | 'ES256';

/**
 * Signing and verification use WebCrypto keys: with them jose goes straight to `crypto.subtle`.
 * Given a KeyObject, jose and Node 24 probe the key's kind by throwing and catching errors with
 * stack traces, three per ES256 signature, which cost about a quarter of the signature.
 */
interface LoadedKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly signingKey: CryptoKey;
  readonly verificationKey: CryptoKey;
  readonly publicJwk: JWK;
}

/**
 * The token signing key ring (contract section 1). For each algorithm the first key signs and
 * every key verifies, so a new key can be published first and promoted later. RS256 keys serve
 * only the control plane and ES256 keys only customer tenants: a management token can never be
 * minted with a customer key, and each realm's JWKS lists only its own algorithm's keys.
 */
export class KeyRing {
  private constructor(private readonly keys: readonly LoadedKey[]) {}

  static async load(config: Pick<AppConfig, 'signingKeys'>): Promise<KeyRing> {
    const loaded: LoadedKey[] = [];
    for (const jwk of config.signingKeys) {
      const alg = jwk.alg as SigningAlg;
      const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      assertSigningStrength(alg, privateKey);
      const publicJwk: JWK = { ...(await exportJWK(createPublicKey(privateKey))), alg, use: 'sig', kid: jwk.kid };
      loaded.push({
        kid: jwk.kid as string,
        alg,
        signingKey: (await importJWK(jwk, alg)) as CryptoKey,
        verificationKey: (await importJWK(publicJwk, alg)) as CryptoKey,
        publicJwk,
      });
    }
    return new KeyRing(loaded);
  }

  /** Public keys only, for a realm's `jwks_uri`. */
  jwks(alg: SigningAlg): { keys: JWK[] } {
    return { keys: this.keys.filter((k) => k.alg === alg).map((k) => k.publicJwk) };
  }

  /** Resolves the verification key by `kid` within one algorithm; unknown kids fail. */
  verificationKey(alg: SigningAlg, kid: string | undefined): CryptoKey | undefined {
    return this.keys.find((k) => k.alg === alg && k.kid === kid)?.verificationKey;
  }

  /**
   * A JWT signed by the first key of `alg`. JWS serialisation stays with jose, like every other
   * JWT and JWK operation: a hand-written serialiser with a synchronous `crypto.sign` would save
   * the hop to libuv's thread pool that WebCrypto makes (docs/performance.md), which is not worth
   * a second implementation of what a token's security rests on.
   */
  sign(alg: SigningAlg, typ: string, payload: JWTPayload): Promise<string> {
    const key = this.keys.find((k) => k.alg === alg);
    if (!key) throw new Error(`no ${alg} signing key`);
    return new SignJWT(payload).setProtectedHeader({ alg, typ, kid: key.kid }).sign(key.signingKey);
  }
}

/** RFC 7518 section 3.3 (RSA at least 2048 bits) and 3.4 (ES256 on P-256), checked once at load. */
function assertSigningStrength(alg: SigningAlg, key: KeyObject): void {
  const details = key.asymmetricKeyDetails;
  const ok =
    alg === 'RS256'
      ? key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048
      : key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1';
  if (!ok) throw new Error(`a ${alg} signing key is too weak or of the wrong type`);
}
