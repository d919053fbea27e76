import { Pseudonymizer, safeEqual } from '../platform/crypto/digests';

/**
 * Client secrets are high-entropy random strings, so a fast keyed digest (HMAC-SHA-256 under
 * the privacy key) is the right store: a password hash would add latency to every token
 * request without adding security. Compared in constant time.
 */
export function clientSecretDigest(p: Pseudonymizer, clientId: string, secret: string): string {
  return p.mac(`client-secret:${clientId}`, secret);
}

export function clientSecretMatches(p: Pseudonymizer, clientId: string, secret: string, storedDigest: string): boolean {
  return safeEqual(clientSecretDigest(p, clientId, secret), storedDigest);
}
