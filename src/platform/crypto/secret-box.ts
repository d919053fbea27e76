import { hkdfSync } from 'node:crypto';
import { open, seal } from './aead';

/**
 * Seals secrets the service must read back (a tenant's chat-platform client secret) under a key
 * derived from the privacy key by HKDF with its own label, so the HMAC key is never reused
 * directly for encryption.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(privacyKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', privacyKey, Buffer.alloc(0), 'svc-auth secret-box v1', 32));
  }

  seal(plaintext: string, purpose: string): string {
    return seal(this.key, plaintext, purpose);
  }

  open(sealed: string, purpose: string): string | null {
    return open(this.key, sealed, purpose);
  }
}
