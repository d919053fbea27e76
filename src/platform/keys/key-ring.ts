import { createPrivateKey, createPublicKey } from 'node:crypto';
import { exportJWK, importJWK, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { AppConfig } from '../../config/config';
import { JwsSigner, type SigningAlg } from './jws-signer';

export type { SigningAlg } from './jws-signer';

/**
 * Verification uses WebCrypto keys: with them jose goes straight to `crypto.subtle`. Given a
 * KeyObject, jose and Node 24 probe the key's kind by throwing and catching errors with stack
 * traces. Signing goes through the JwsSigner, off jose (issue 24).
 */
interface LoadedKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly signer: JwsSigner;
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
      const kid = jwk.kid as string;
      const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      // The signer refuses a weak key or one of the wrong kind (RFC 7518 sections 3.3 and 3.4).
      const signer = new JwsSigner(alg, kid, privateKey);
      const publicJwk: JWK = { ...(await exportJWK(createPublicKey(privateKey))), alg, use: 'sig', kid };
      loaded.push({
        kid,
        alg,
        signer,
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
   * A JWT signed by the first key of `alg`, header `{alg, typ, kid}`. The signature is made
   * synchronously (JwsSigner); the answer stays a promise, so callers keep their shape and a
   * missing key still reaches them as a rejection.
   */
  sign(alg: SigningAlg, typ: string, payload: JWTPayload): Promise<string> {
    return new Promise((resolve) => {
      const key = this.keys.find((k) => k.alg === alg);
      if (!key) throw new Error(`no ${alg} signing key`);
      resolve(key.signer.sign(typ, payload));
    });
  }
}
