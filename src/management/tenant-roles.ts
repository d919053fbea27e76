import { MEMBERSHIP_ROLES, type MembershipRole } from '../directory/records';

/**
 * Who may do what in a tenant (contract 15), in one table: each console action, the least
 * membership role that may take it, and whether it writes. Roles are ordered viewer < developer <
 * admin < owner: `viewer` and `developer` read; `developer` also reads players; `admin` also
 * changes clients and players; `owner` also changes members. A write also needs the bearer's
 * `tenant:write` scope. Every write is audited as `console.` plus its action.
 */
export const TENANT_ACTIONS = {
  'tenant.read': { role: 'viewer', writes: false },
  'client.list': { role: 'viewer', writes: false },
  'client.create': { role: 'admin', writes: true },
  'client.update': { role: 'admin', writes: true },
  'user.search': { role: 'developer', writes: false },
  'user.read': { role: 'developer', writes: false },
  'user.deactivate': { role: 'admin', writes: true },
  'user.delete': { role: 'admin', writes: true },
  'session.revoke': { role: 'admin', writes: true },
  'audit.read': { role: 'viewer', writes: false },
  'stats.read': { role: 'viewer', writes: false },
  'member.list': { role: 'viewer', writes: false },
  'member.add': { role: 'owner', writes: true },
  'member.remove': { role: 'owner', writes: true },
} as const satisfies Record<string, { role: MembershipRole; writes: boolean }>;

export type TenantAction = keyof typeof TENANT_ACTIONS;

/** viewer 0 … owner 3: MEMBERSHIP_ROLES lists them from owner down. */
const rank = (role: MembershipRole): number => MEMBERSHIP_ROLES.length - 1 - MEMBERSHIP_ROLES.indexOf(role);

export function roleMayTake(role: MembershipRole, action: TenantAction): boolean {
  return rank(role) >= rank(TENANT_ACTIONS[action].role);
}

/** The audit type of a write: `console.` plus the action (contract 15), e.g. `console.client.update`. */
export function auditTypeOf(action: TenantAction): string {
  return `console.${action}`;
}
