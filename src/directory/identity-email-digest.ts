import type { Pseudonymizer } from '../platform/crypto/digests';
import { CONTROL_PLANE_TENANT_ID } from './control-plane';
import { canonicalEmail } from './email-address';

/** Its own domain: an address digest never matches a digest made for another purpose. */
const DOMAIN = 'svc:identity-email';

/** What decides whether an identity is found by an address, and by which one. */
export interface AddressedIdentity {
  readonly tenantId: string;
  readonly provider: string;
  readonly providerSubject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
}

/**
 * The address a player is looked up by: an email identity's subject, or a provider's email once
 * the provider verified it (an unverified claim names nobody), canonical as the email flows store
 * it. Console members (control-plane identities) are no tenant's players and are never looked up
 * by address, so they carry none: `membership add` keeps needing only DATABASE_URL.
 */
function lookupAddress(identity: AddressedIdentity): string | null {
  if (identity.tenantId === CONTROL_PLANE_TENANT_ID) return null;
  if (identity.provider === 'email') return canonicalEmail(identity.providerSubject);
  return identity.emailVerified && identity.email !== null ? canonicalEmail(identity.email) : null;
}

/**
 * Keyed digests of players' addresses (issue 26): identities keep `email_digest`, the HMAC of their
 * address under the first PRIVACY_KEY, so the console finds a player by address through an index
 * on the digest and never reads or compares the plain address columns. The keys are asked for on
 * first use, so an admin command that writes no digest does not need PRIVACY_KEY.
 */
export class IdentityEmailDigest {
  constructor(private readonly keys: () => Pseudonymizer) {}

  /** The digest to store for an identity, or null when it has no address to be found by. */
  of(identity: AddressedIdentity): string | null {
    const address = lookupAddress(identity);
    return address === null ? null : this.keys().mac(DOMAIN, address);
  }

  /** Every digest a stored row may hold for this address: one per PRIVACY_KEY, current first. */
  candidates(address: string): string[] {
    return this.keys().macs(DOMAIN, canonicalEmail(address));
  }
}
