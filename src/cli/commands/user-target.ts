import { canonicalEmail } from '../../directory/email-address';
import type { UserDetails, UserRecordsRepository } from '../../directory/user-records.repository';
import { AdminInputError, optional, type OptionValues } from '../admin-command';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { TENANT_ID_PATTERN, USER_ID_PATTERN } from '../../directory/identifiers';

export const USER_TARGET_OPTIONS = {
  email: { type: 'string' },
  tenant: { type: 'string' },
  id: { type: 'string' },
} as const;

/** `--email` names a control-plane user; `--tenant --id` any user of a tenant (contract 12). */
export async function findTargetUser(users: UserRecordsRepository, v: OptionValues): Promise<UserDetails> {
  const email = optional(v, 'email');
  const tenant = optional(v, 'tenant');
  const id = optional(v, 'id');
  if (email !== undefined && tenant === undefined && id === undefined) {
    const user = await users.findByIdentity(CONTROL_PLANE_TENANT_ID, 'email', canonicalEmail(email));
    if (!user) throw new AdminInputError('no control-plane user with that email');
    return user;
  }
  if (email === undefined && tenant !== undefined && id !== undefined) {
    if (!TENANT_ID_PATTERN.test(tenant) || !USER_ID_PATTERN.test(id))
      throw new AdminInputError('--tenant or --id is malformed');
    const user = await users.find(tenant, id);
    if (!user) throw new AdminInputError(`no user ${id} in tenant ${tenant}`);
    return user;
  }
  throw new AdminInputError('give either --email (control plane) or --tenant and --id');
}

export function toUserResponse(u: UserDetails): unknown {
  return {
    id: u.id,
    tenant: u.tenantId,
    kind: u.kind,
    status: u.status,
    created_at: u.createdAt.toISOString(),
    deactivated_at: u.deactivatedAt?.toISOString() ?? null,
    identities: u.identities.map((i) => ({
      provider: i.provider,
      provider_subject: i.providerSubject,
      email: i.email,
    })),
    memberships: u.memberships.map((m) => ({ tenant: m.tenantId, role: m.role })),
  };
}
