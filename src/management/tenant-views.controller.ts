import { Controller, Query } from '@nestjs/common';
import { Route } from '../http/route';
import { MANAGEMENT_ROUTES } from './management.routes';
import { ForTenantAction, MemberTenant, type MemberTenantAccess } from './tenant-membership.guard';
import { AuditQuery, StatsQuery, type AuditPageResponse, type StatsResponse } from './tenant-views.dto';
import { TenantViewsService } from './tenant-views.service';

/** A tenant's audit trail and daily counts in the console (contract 15). */
@Controller()
export class TenantViewsController {
  constructor(private readonly views: TenantViewsService) {}

  @Route(MANAGEMENT_ROUTES.audit)
  @ForTenantAction('audit.read')
  audit(@MemberTenant() access: MemberTenantAccess, @Query() query: AuditQuery): Promise<AuditPageResponse> {
    return this.views.auditPage(access, query);
  }

  @Route(MANAGEMENT_ROUTES.stats)
  @ForTenantAction('stats.read')
  stats(@MemberTenant() access: MemberTenantAccess, @Query() query: StatsQuery): Promise<StatsResponse> {
    return this.views.dailyStats(access, query.days);
  }
}
