import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { MembershipsRepository } from '../directory/memberships.repository';
import { TenantsRepository } from '../directory/tenants.repository';
import { AppError } from '../errors/app-error';
import { TENANT_ID_PATTERN } from '../platform/crypto/ids';
import type { RequestWithPrincipal } from '../http/principal';
import type { MembershipRole } from '../platform/database/entities/membership.entity';
import type { TenantEntity } from '../platform/database/entities/tenant.entity';

export interface MemberTenantAccess {
  readonly tenant: TenantEntity;
  readonly role: MembershipRole;
}

interface RequestWithTenant extends RequestWithPrincipal {
  memberTenant?: MemberTenantAccess;
}

const forbidden = (): AppError => new AppError('forbidden', 'No access to this tenant.');

/**
 * Tenant routes also need a current membership of that tenant (spec sections 1.3 and 5). Runs
 * after the global policy guard has proven the management bearer token. Reads only.
 * No membership, an unknown tenant, an inactive one and the control-plane realm all give the
 * same 403 `forbidden`, so the answer never reveals whether a tenant exists (contract section 5).
 * The membership is checked first: a non-member's request never even reads the tenant row.
 */
@Injectable()
export class TenantMembershipGuard implements CanActivate {
  constructor(
    private readonly memberships: MembershipsRepository,
    private readonly tenants: TenantsRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<RequestWithTenant>();
    const principal = req.principal;
    if (principal?.kind !== 'management') throw new AppError('server_error');
    const tenantId = req.params.id;
    if (typeof tenantId !== 'string' || !TENANT_ID_PATTERN.test(tenantId)) throw forbidden();
    const membership = await this.memberships.find(tenantId, principal.userId);
    if (!membership) throw forbidden();
    const tenant = await this.tenants.findActiveCustomer(tenantId);
    if (!tenant) throw forbidden();
    req.memberTenant = { tenant, role: membership.role };
    return true;
  }
}

/** The tenant the membership guard admitted the caller to. */
export const MemberTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): MemberTenantAccess => {
  const access = ctx.switchToHttp().getRequest<RequestWithTenant>().memberTenant;
  if (!access) throw new AppError('server_error');
  return access;
});
