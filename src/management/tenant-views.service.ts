import { Injectable } from '@nestjs/common';
import { AuditPagesRepository } from '../directory/audit-pages.repository';
import { DailyStatsRepository } from '../directory/daily-stats.repository';
import { AppError } from '../errors/app-error';
import type { MemberTenantAccess } from './tenant-membership.guard';
import { toAuditPage, type AuditPageResponse, type AuditQuery, type StatsResponse } from './tenant-views.dto';

/** Contract 15: the audit trail in pages of 50, newest first. */
export const AUDIT_PAGE_SIZE = 50;
const DEFAULT_STATS_DAYS = 30;
const MAX_STATS_DAYS = 90;

/** What the console shows of a tenant's history: its audit trail and its daily counts (contract 15). */
@Injectable()
export class TenantViewsService {
  constructor(
    private readonly audit: AuditPagesRepository,
    private readonly stats: DailyStatsRepository,
  ) {}

  async auditPage(access: MemberTenantAccess, query: AuditQuery): Promise<AuditPageResponse> {
    // One row more than a page tells whether an older page exists.
    const events = await this.audit.page(access.tenant.id, query, AUDIT_PAGE_SIZE + 1);
    return toAuditPage(events, AUDIT_PAGE_SIZE);
  }

  async dailyStats(access: MemberTenantAccess, daysParam: string | undefined): Promise<StatsResponse> {
    const days = daysParam === undefined ? DEFAULT_STATS_DAYS : Number(daysParam);
    if (!Number.isInteger(days) || days < 1 || days > MAX_STATS_DAYS)
      throw new AppError('invalid_request', `days must be 1 to ${MAX_STATS_DAYS}.`);
    return { days: await this.stats.lastDays(access.tenant.id, days) };
  }
}
