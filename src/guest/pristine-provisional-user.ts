/**
 * What the upgrade knows about the current owner of a proven credential and that credential,
 * read under row locks in the upgrade's transaction. Times are database-clock epoch ms.
 */
export interface CredentialOwnerFacts {
  readonly kind: string;
  readonly status: string;
  readonly ownerCreatedAt: number;
  readonly identityCreatedAt: number;
  /** Identities the owner holds, this one included. */
  readonly identities: number;
  readonly hadSession: boolean;
  readonly hadMembership: boolean;
  readonly hadConsent: boolean;
}

/**
 * Spec 4.3 rule 6: a proven credential may move to a guest only when its owner is a pristine
 * provisional user, that is: a provisional, active user that it and its identity were both
 * created after the linking intent (so nobody can pre-register a credential and wait for a guest
 * to claim it), that owns no other identity, and that never had a session, membership or consent
 * record (so no account with a history is ever emptied). Any other owner keeps the credential and
 * the upgrade answers `identity_in_use`; nothing is merged.
 */
export function isPristineProvisionalUser(owner: CredentialOwnerFacts, intentCreatedAt: number): boolean {
  return (
    owner.kind === 'provisional' &&
    owner.status === 'active' &&
    owner.ownerCreatedAt > intentCreatedAt &&
    owner.identityCreatedAt > intentCreatedAt &&
    owner.identities === 1 &&
    !owner.hadSession &&
    !owner.hadMembership &&
    !owner.hadConsent
  );
}
