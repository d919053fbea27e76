import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Digest of a high-entropy secret (refresh tokens, authorization codes, cookie values).
 * A fast hash is right here: the input has 256 bits of entropy, so there is nothing to brute-force.
 */
export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Constant-time comparison of two strings via equal-length digests. */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/**
 * Keyed pseudonymisation (HMAC-SHA-256) under the privacy key, with a domain separator so a
 * value pseudonymised for one purpose cannot be matched against another purpose's table.
 */
export class Pseudonymizer {
  constructor(private readonly key: Buffer) {}

  mac(domain: string, value: string): string {
    return createHmac('sha256', this.key).update(domain, 'utf8').update('\0').update(value, 'utf8').digest('base64url');
  }
}
