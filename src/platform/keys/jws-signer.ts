import { sign, type KeyObject } from 'node:crypto';
import { derToJose } from 'ecdsa-sig-formatter';
import type { JWTPayload } from 'jose';

export type SigningAlg = 'RS256' | 'ES256';

/**
 * The one place the service makes a JWS (issue 24, "signing off the thread pool"): compact
 * serialisation (RFC 7515 section 7.1) of the header `{alg, typ, kid}` and the claims, signed
 * synchronously through `node:crypto` with a KeyObject built once. jose signs through WebCrypto,
 * whose every signature is a job on libuv's thread pool (about 100 µs of an ES256 signature against
 * about half that here, docs/performance.md); a token endpoint's CPU is mostly its signatures.
 * Only the serialisation is ours: the signature is Node's (OpenSSL's), its conversion to JOSE's form
 * ecdsa-sig-formatter's, and jose keeps key import, JWKS and every verification.
 * test/unit/jws-signer.spec.ts verifies what this signs with jose.
 */
export class JwsSigner {
  constructor(
    readonly alg: SigningAlg,
    readonly kid: string,
    private readonly key: KeyObject,
  ) {
    assertSigningKey(alg, key);
  }

  /** A compact JWS of `payload` (RS256: RSASSA-PKCS1-v1_5 with SHA-256; ES256: ECDSA P-256). */
  sign(typ: string, payload: JWTPayload): string {
    const input = `${base64url({ alg: this.alg, typ, kid: this.kid })}.${base64url(payload)}`;
    const signature = sign('sha256', Buffer.from(input), this.key);
    // RFC 7518 section 3.4: an ES256 JWS signature is R || S, and Node makes DER. Node converts
    // only when given `{ key, dsaEncoding }`, and in Node 24 that form costs two thrown and caught
    // TypeErrors per call while it probes the object's kind: an ES256 signature took 34 µs that
    // way against 18 µs as DER converted here (docs/performance.md).
    return `${input}.${this.alg === 'ES256' ? derToJose(signature, 'ES256') : signature.toString('base64url')}`;
  }
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * RFC 7518 section 3.3 (RSA of at least 2048 bits) and 3.4 (ES256 on P-256), checked once when
 * the key is loaded: a key of the wrong kind would otherwise sign tokens no verifier accepts.
 */
function assertSigningKey(alg: SigningAlg, key: KeyObject): void {
  const details = key.asymmetricKeyDetails;
  const ok =
    key.type === 'private' &&
    (alg === 'RS256'
      ? key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048
      : key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1');
  if (!ok) throw new Error(`a ${alg} signing key is too weak or of the wrong type`);
}
