import { Controller, Get, UseGuards } from '@nestjs/common';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { UsePolicy } from '../http/policy.decorator';
import {
  toTenantResponse,
  type ClientListResponse,
  type TenantListResponse,
  type TenantResponse,
} from './management.dto';
import { MemberTenant, TenantMembershipGuard, type MemberTenantAccess } from './tenant-membership.guard';
import { TenantsService } from './tenants.service';

/**
 * The management API (spec 4.2, contract section 5): read-only. Tenant creation and client
 * management are admin-CLI operations, never API operations, so no write route exists here.
 * Only management tokens of the control-plane realm pass the `bearer:management` policy;
 * customer and guest tokens fail it with 401.
 */
@Controller('management/tenants')
@UsePolicy('bearer:management')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Get()
  list(@CurrentPrincipal('management') p: PrincipalOf<'management'>): Promise<TenantListResponse> {
    return this.tenants.listForUser(p.userId);
  }

  @Get(':id')
  @UseGuards(TenantMembershipGuard)
  get(@MemberTenant() access: MemberTenantAccess): TenantResponse {
    return toTenantResponse(access.tenant);
  }

  @Get(':id/clients')
  @UseGuards(TenantMembershipGuard)
  clients(@MemberTenant() access: MemberTenantAccess): Promise<ClientListResponse> {
    return this.tenants.clientsOf(access.tenant.id);
  }
}
