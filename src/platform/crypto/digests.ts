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
 * Contract 12: PRIVACY_KEY is a list; the first key makes every new digest, every key verifies,
 * so stored digests (client secrets) survive a rotation.
 */
export class Pseudonymizer {
  private readonly keys: readonly Buffer[];

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('Pseudonymizer needs at least one key');
    this.keys = keys;
  }

  mac(domain: string, value: string): string {
    return hmac(this.keys[0] as Buffer, domain, value);
  }

  /** The digest under every key, current first: what a stored digest may have been made with. */
  macs(domain: string, value: string): string[] {
    return this.keys.map((k) => hmac(k, domain, value));
  }
}

function hmac(key: Buffer, domain: string, value: string): string {
  return createHmac('sha256', key).update(domain, 'utf8').update('\0').update(value, 'utf8').digest('base64url');
}
