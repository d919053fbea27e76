import { Controller } from '@nestjs/common';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import {
  toTenantResponse,
  type ClientListResponse,
  type TenantListResponse,
  type TenantResponse,
} from './management.dto';
import { MANAGEMENT_ROUTES } from './management.routes';
import { MemberTenant, TenantRoute, type MemberTenantAccess } from './tenant-membership.guard';
import { TenantsService } from './tenants.service';

/**
 * The management API's tenant views (spec 4.2, contract section 5). Tenant creation stays an
 * admin-CLI operation; the console's changes of a tenant's clients, players and members have
 * controllers of their own (contract 15). Only management tokens of the control-plane realm pass the `bearer:management` policy;
 * customer and guest tokens fail it with 401.
 */
@Controller()
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Route(MANAGEMENT_ROUTES.tenants)
  list(@CurrentPrincipal('management') p: PrincipalOf<'management'>): Promise<TenantListResponse> {
    return this.tenants.listForUser(p.userId);
  }

  @TenantRoute(MANAGEMENT_ROUTES.tenant)
  get(@MemberTenant() access: MemberTenantAccess): TenantResponse {
    return toTenantResponse(access.tenant);
  }

  @TenantRoute(MANAGEMENT_ROUTES.clients)
  clients(@MemberTenant() access: MemberTenantAccess): Promise<ClientListResponse> {
    return this.tenants.clientsOf(access.tenant.id);
  }
}
