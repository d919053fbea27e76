import { hkdfSync } from 'node:crypto';
import { open, seal } from './aead';

/**
 * Seals secrets the service must read back (a tenant's chat-platform client secret) under a key
 * derived from the privacy key by HKDF with its own label, so the HMAC key is never reused
 * directly for encryption. Contract 12: the first privacy key seals, every key opens; `chat
 * reseal` moves old seals to the current key before an old key is dropped.
 */
export class SecretBox {
  private derived: readonly Buffer[] | null = null;

  /**
   * `privacyKeys` may be given as a function, called on the first seal or open: an admin command
   * that only lists or removes sealed rows then needs no PRIVACY_KEY.
   */
  constructor(private readonly privacyKeys: readonly Buffer[] | (() => readonly Buffer[])) {}

  private get keys(): readonly Buffer[] {
    if (this.derived) return this.derived;
    const given = typeof this.privacyKeys === 'function' ? this.privacyKeys() : this.privacyKeys;
    if (given.length === 0) throw new Error('SecretBox needs at least one key');
    return (this.derived = given.map((k) =>
      Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), 'svc-auth secret-box v1', 32)),
    ));
  }

  seal(plaintext: string, purpose: string): string {
    return seal(this.keys[0] as Buffer, plaintext, purpose);
  }

  open(sealed: string, purpose: string): string | null {
    return this.openWithKey(sealed, purpose)?.plaintext ?? null;
  }

  /** The plaintext and whether it was sealed under the current key (false: needs a re-seal). */
  openWithKey(sealed: string, purpose: string): { plaintext: string; current: boolean } | null {
    for (const [i, key] of this.keys.entries()) {
      const plaintext = open(key, sealed, purpose);
      if (plaintext !== null) return { plaintext, current: i === 0 };
    }
    return null;
  }
}
