import { randomBytes } from 'node:crypto';

/**
 * The syntax of opaque identifiers (contract section 2): a type prefix and 128 bits from the
 * CSPRNG. Which prefix names which record is the directory's vocabulary (src/directory/identifiers.ts);
 * the syntax stays here because layers that may not read the directory check or mint ids too: the
 * session store mints session ids, and the console BFF checks the ids it forwards.
 */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

/** A bearer secret (cookie values, codes handed to clients): 256 bits from the CSPRNG. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Ids from newId() are 22 base64url characters after the prefix; the pattern accepts 16–64 so
 * that a change of length never strands stored ids.
 */
export const ID_PATTERN = (prefix: string): RegExp => new RegExp(`^${prefix}_[A-Za-z0-9_-]{16,64}$`);

/**
 * Tenant ids as the admin CLI creates them: lower-case letters, digits and hyphens. A decoded
 * `/`, `.` or `%` never matches, so a path parameter that passes can never leave its path segment.
 */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** Client ids, chosen by the operator (`cli_demo_game`): the prefix and 1–64 base64url characters. */
export const CLIENT_ID_PATTERN = /^cli_[A-Za-z0-9_-]{1,64}$/;
