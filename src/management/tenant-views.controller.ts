import { Controller, Query } from '@nestjs/common';
import { MANAGEMENT_ROUTES } from './management.routes';
import { MemberTenant, TenantRoute, type MemberTenantAccess } from './tenant-membership.guard';
import { AuditQuery, StatsQuery, type AuditPageResponse, type StatsResponse } from './tenant-views.dto';
import { TenantViewsService } from './tenant-views.service';

/** A tenant's audit trail and daily counts in the console (contract 15). */
@Controller()
export class TenantViewsController {
  constructor(private readonly views: TenantViewsService) {}

  @TenantRoute(MANAGEMENT_ROUTES.audit)
  audit(@MemberTenant() access: MemberTenantAccess, @Query() query: AuditQuery): Promise<AuditPageResponse> {
    return this.views.auditPage(access, query);
  }

  @TenantRoute(MANAGEMENT_ROUTES.stats)
  stats(@MemberTenant() access: MemberTenantAccess, @Query() query: StatsQuery): Promise<StatsResponse> {
    return this.views.dailyStats(access, query.days);
  }
}
