import { createHash } from 'node:crypto';
import { safeEqual } from '../platform/crypto/digests';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function pkceMatches(verifier: string | undefined, challenge: string): boolean {
  if (!verifier || !VERIFIER.test(verifier)) return false;
  return safeEqual(createHash('sha256').update(verifier, 'ascii').digest('base64url'), challenge);
}
