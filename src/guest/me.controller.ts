import { Controller, Delete, Get, Param } from '@nestjs/common';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { UsePolicy } from '../http/policy.decorator';
import { MeService, type MeResponse } from './me.service';
import { TenantIdPipe } from './tenant-id.pipe';

/**
 * Contract 13: a player reads and deletes its own account. The path's tenant must be a customer
 * tenant (TenantIdPipe) and the bearer's (PolicyGuard); a browser's Origin is checked against the
 * token's client before this runs (tenant-cors.ts).
 */
@Controller('t/:tenantId/me')
@UsePolicy('bearer:guest')
export class MeController {
  constructor(private readonly me: MeService) {}

  @Get()
  show(
    @Param('tenantId', TenantIdPipe) _tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
  ): Promise<MeResponse> {
    return this.me.show(player);
  }

  @Delete()
  delete(
    @Param('tenantId', TenantIdPipe) _tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
  ): Promise<{ deleted: true }> {
    return this.me.delete(player);
  }
}
