import type { IdentityClaim } from './records';
import { CONTROL_PLANE_TENANT_ID } from './control-plane';

/**
 * An address as a member or a player is looked up by: something, an @, something, no spaces
 * (tested after canonicalEmail).
 */
export const EMAIL_ADDRESS = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/**
 * Canonical form of an email address used as an identity subject: trimmed and lower-cased, so
 * `Dev@Studio.com` and `dev@studio.com` are one identity. Validation happens at the edge (DTOs).
 */
export function canonicalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The claim of a control-plane email identity: verified, since a code sent to it was entered. */
export function controlPlaneEmailClaim(email: string): IdentityClaim {
  return {
    tenantId: CONTROL_PLANE_TENANT_ID,
    provider: 'email',
    providerSubject: email,
    email,
    emailVerified: true,
    metadata: {},
  };
}
