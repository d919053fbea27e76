import type { AuditData, AuditRecord } from '../directory/audit-trail.repository';
import type { MemberTenantAccess } from './tenant-membership.guard';
import { auditTypeOf, type TenantAction } from './tenant-roles';

/**
 * The audit row of a console write (contract 15): `console.` plus the action, the changed thing as
 * subject, and the acting developer's user id as `actor_id`. Ids and facts only, never an address.
 */
export function consoleRecord(
  access: MemberTenantAccess,
  action: TenantAction,
  subject: string,
  data: AuditData = {},
): AuditRecord {
  return {
    type: auditTypeOf(action),
    tenantId: access.tenant.id,
    subject,
    data: { actor_id: access.actorId, ...data },
  };
}
