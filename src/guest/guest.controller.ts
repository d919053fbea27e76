import { Body, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { guestContext, sendIntent, sendWithFlowCookie, type GuestRequestContext } from './browser-flows';
import type { CustomerTokenSet } from './customer-sessions';
import { GUEST_PROOF_ROUTES } from './guest-proofs.routes';
import { FlowBoundDto, LinkingIntentDto, ProofDto } from './guest.dto';
import { GUEST_ROUTES } from './guest.routes';
import { GuestService, type GuestResponse } from './guest.service';
import { withRefreshCookie } from './refresh-cookie';
import { TenantIdPipe } from './tenant-id.pipe';
import { UpgradeService, type UpgradeResponse } from './upgrade.service';

@Controller()
export class GuestController {
  constructor(
    private readonly guests: GuestService,
    private readonly upgrades: UpgradeService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(GUEST_ROUTES.create)
  async create(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: FlowBoundDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<GuestResponse> {
    const created = sendWithFlowCookie(res, await this.guests.create(this.context(req, tenantId, body)));
    return withRefreshCookie(req, res, created, this.config);
  }

  @Route(GUEST_ROUTES.linkingIntent)
  async linkingIntent(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @CurrentPrincipal('guest') guest: PrincipalOf<'guest'>,
    @Body() body: LinkingIntentDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ intent_id: string; expires_in: number }> {
    const ctx = this.context(req, tenantId, body);
    return sendIntent(res, await this.guests.linkingIntent(ctx, guest, { upgradeProofId: body.upgrade_proof_id }));
  }

  @Route(GUEST_ROUTES.upgrade)
  async upgrade(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @CurrentPrincipal('guest') guest: PrincipalOf<'guest'>,
    @Body() body: ProofDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpgradeResponse> {
    const upgraded = await this.upgrades.upgrade(this.context(req, tenantId, body), guest, body.proof_id);
    return withRefreshCookie(req, res, upgraded, this.config);
  }

  @Route(GUEST_PROOF_ROUTES.signIn)
  async signIn(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: ProofDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ user_id: string } & CustomerTokenSet> {
    return withRefreshCookie(
      req,
      res,
      await this.guests.signIn(this.context(req, tenantId, body), body.proof_id),
      this.config,
    );
  }

  private context(req: Request, tenantId: string, body: FlowBoundDto): GuestRequestContext {
    return guestContext(req, this.config, tenantId, body);
  }
}
