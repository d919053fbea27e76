import { Pseudonymizer, safeEqual } from '../platform/crypto/digests';

/**
 * Client secrets are high-entropy random strings, so a fast keyed digest (HMAC-SHA-256 under
 * the privacy key) is the right store: a password hash would add latency to every token
 * request without adding security. Compared in constant time.
 */
export function clientSecretDigest(p: Pseudonymizer, clientId: string, secret: string): string {
  return p.mac(`client-secret:${clientId}`, secret);
}

/**
 * The stored value holds one digest, or several separated by spaces while a console client
 * secret rotates (docs/operations.md); each is checked under every privacy key (contract 12).
 * Every comparison runs, so the time spent does not depend on which one matched.
 */
export function clientSecretMatches(p: Pseudonymizer, clientId: string, secret: string, stored: string): boolean {
  const candidates = p.macs(`client-secret:${clientId}`, secret);
  let matched = false;
  for (const digest of stored.split(' ')) {
    for (const candidate of candidates) matched = safeEqual(candidate, digest) || matched;
  }
  return matched;
}
