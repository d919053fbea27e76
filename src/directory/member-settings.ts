import { isMailboxAddress } from '../platform/mail/mailbox-address';
import { canonicalEmail } from './email-address';
import { MEMBERSHIP_ROLES, type MembershipRole } from './records';

export type CheckedMember =
  | { readonly member: { readonly email: string; readonly role: MembershipRole } }
  | { readonly problem: { readonly field: 'email' | 'role'; readonly message: string } };

/**
 * The one set of rules for adding a member to a tenant, shared by `membership add` and the
 * console's `POST …/members` (contract 15): a role of the four, and an email address, taken in
 * its canonical form (the control-plane identity it names, created if the developer never signed
 * in).
 */
export function checkMember(email: string, role: string): CheckedMember {
  if (!(MEMBERSHIP_ROLES as readonly string[]).includes(role))
    return { problem: { field: 'role', message: `must be one of ${MEMBERSHIP_ROLES.join(', ')}` } };
  const address = canonicalEmail(email);
  // The sign-in form's own test (management-auth.dto.ts): an address it refuses could never sign in.
  if (!isMailboxAddress(address)) return { problem: { field: 'email', message: 'must be an email address' } };
  return { member: { email: address, role: role as MembershipRole } };
}
