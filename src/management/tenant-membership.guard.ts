import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MANAGEMENT_WRITE_SCOPE } from '../directory/control-plane';
import { MembershipsRepository } from '../directory/memberships.repository';
import { AppError } from '../errors/app-error';
import type { RequestWithPrincipal } from '../http/principal';
import { Route } from '../http/route';
import type { TenantRouteDeclaration } from './management.routes';
import { roleMayTake, TENANT_ACTIONS, type TenantAction } from './tenant-roles';
import { TENANT_ID_PATTERN } from '../directory/identifiers';
import type { MembershipRole, TenantRecord } from '../directory/records';

export interface MemberTenantAccess {
  readonly tenant: TenantRecord;
  readonly role: MembershipRole;
  /** The acting developer (control-plane user id), named in the audit rows of writes. */
  readonly actorId: string;
}

interface RequestWithTenant extends RequestWithPrincipal {
  memberTenant?: MemberTenantAccess;
}

const TENANT_ACTION_KEY = 'svc:tenant-action';

const forbidden = (): AppError => new AppError('forbidden', 'No access to this tenant.');

/**
 * Tenant routes need a current membership of that tenant (spec sections 1.3 and 5) whose role may
 * take the route's action, and for a write the `tenant:write` scope (contract 15; the table is
 * tenant-roles.ts). Runs after the global policy guard has proven the management bearer token.
 * Reads only.
 * No membership, an unknown tenant, an inactive one and the control-plane realm all give the
 * same 403 `forbidden`, so the answer never reveals whether a tenant exists (contract section 5).
 * Membership and tenant are read together in one statement. A member without the role or the
 * scope gets a 403 that says so: they know the tenant already.
 */
@Injectable()
export class TenantMembershipGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly memberships: MembershipsRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const action = this.reflector.get<TenantAction | undefined>(TENANT_ACTION_KEY, context.getHandler());
    const req = context.switchToHttp().getRequest<RequestWithTenant>();
    const principal = req.principal;
    if (principal?.kind !== 'management' || action === undefined) throw new AppError('server_error');
    const tenantId = req.params.id;
    if (typeof tenantId !== 'string' || !TENANT_ID_PATTERN.test(tenantId)) throw forbidden();
    const membership = await this.memberships.findInActiveCustomerTenant(tenantId, principal.userId);
    if (!membership) throw forbidden();
    const { tenant } = membership;
    if (!roleMayTake(membership.role, action))
      throw new AppError('forbidden', `The ${membership.role} role may not do this (${action}).`);
    if (TENANT_ACTIONS[action].writes && !principal.scope.includes(MANAGEMENT_WRITE_SCOPE))
      throw new AppError('forbidden', `This change needs the ${MANAGEMENT_WRITE_SCOPE} scope.`);
    req.memberTenant = { tenant, role: membership.role, actorId: principal.userId };
    return true;
  }
}

/** Mounts a tenant route as declared (management.routes.ts), behind the guard that checks its action. */
export const TenantRoute = (route: TenantRouteDeclaration): MethodDecorator =>
  applyDecorators(Route(route), SetMetadata(TENANT_ACTION_KEY, route.action), UseGuards(TenantMembershipGuard));

/** The tenant the membership guard admitted the caller to. */
export const MemberTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): MemberTenantAccess => {
  const access = ctx.switchToHttp().getRequest<RequestWithTenant>().memberTenant;
  if (!access) throw new AppError('server_error');
  return access;
});
