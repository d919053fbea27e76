import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
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
  list(
    @CurrentPrincipal('management') p: PrincipalOf<'management'>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TenantListResponse> {
    res.setHeader('Cache-Control', 'no-store');
    return this.tenants.listForUser(p.userId);
  }

  @Get(':id')
  @UseGuards(TenantMembershipGuard)
  get(@MemberTenant() access: MemberTenantAccess, @Res({ passthrough: true }) res: Response): TenantResponse {
    res.setHeader('Cache-Control', 'no-store');
    return toTenantResponse(access.tenant);
  }

  @Get(':id/clients')
  @UseGuards(TenantMembershipGuard)
  clients(
    @MemberTenant() access: MemberTenantAccess,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ClientListResponse> {
    res.setHeader('Cache-Control', 'no-store');
    return this.tenants.clientsOf(access.tenant.id);
  }
}
