import { randomBytes } from 'node:crypto';

export type IdPrefix = 'usr' | 'ses' | 'flw' | 'prf' | 'cli' | 'lnk' | 'idn' | 'evt';

/** Opaque identifiers: a type prefix and 128 bits from the CSPRNG (contract section 2). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

/** A bearer secret (cookie values, codes handed to clients): 256 bits from the CSPRNG. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export const ID_PATTERN = (prefix: IdPrefix): RegExp => new RegExp(`^${prefix}_[A-Za-z0-9_-]{16,64}$`);
