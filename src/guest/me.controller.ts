import { Controller, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { RefreshTokens } from '../platform/session-store/refresh-tokens';
import { Route } from '../http/route';
import { GUEST_ROUTES } from './guest.routes';
import { MeService, type MeResponse } from './me.service';
import { clearRefreshCookie, readRefreshCookie } from './refresh-cookie';
import { TenantIdPipe } from './tenant-id.pipe';

/**
 * Contract 13: a player reads and deletes its own account. The path's tenant must be a customer
 * tenant (TenantIdPipe) and the bearer's (PolicyGuard); a browser's Origin is checked against the
 * token's client before this runs (tenant-cors.ts).
 */
@Controller()
export class MeController {
  constructor(
    private readonly me: MeService,
    private readonly refreshTokens: RefreshTokens,
  ) {}

  @Route(GUEST_ROUTES.me)
  show(
    @Param('tenantId', TenantIdPipe) _tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
  ): Promise<MeResponse> {
    return this.me.show(player);
  }

  @Route(GUEST_ROUTES.deleteMe)
  async delete(
    @Param('tenantId', TenantIdPipe) _tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ deleted: true }> {
    const deleted = await this.me.delete(player);
    // The erased player's refresh cookie is dead: the browser drops it (issue 22 finding 7). The
    // site's cookie may hold another player's session by now (another page of the site started a
    // guest since), which is that player's only credential: only the erased session's goes.
    const cookie = readRefreshCookie(req, player.tenantId, player.clientId);
    if (cookie !== undefined && this.refreshTokens.parse(cookie)?.sessionId === player.sessionId)
      clearRefreshCookie(req, res, player.tenantId, player.clientId);
    return deleted;
  }
}
