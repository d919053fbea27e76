import { Body, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { AccountLinkingService } from './account-linking.service';
import { guestContext, sendIntent } from './browser-flows';
import { FlowBoundDto, ProofDto } from './guest.dto';
import { GuestService } from './guest.service';
import { ME_IDENTITY_ROUTES } from './me-identities.routes';
import { TenantIdPipe } from './tenant-id.pipe';
import type { LinkedIdentity } from './upgrade.service';

/** A full account's credentials (contract 14): link with a proof after an intent, unlink one. */
@Controller()
export class MeIdentitiesController {
  constructor(
    private readonly guests: GuestService,
    private readonly linking: AccountLinkingService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(ME_IDENTITY_ROUTES.linkingIntent)
  async linkingIntent(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
    @Body() body: FlowBoundDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ intent_id: string; expires_in: number }> {
    const ctx = guestContext(req, this.config, tenantId, body);
    return sendIntent(res, await this.guests.linkingIntent(ctx, player, { subject: 'regular' }));
  }

  @Route(ME_IDENTITY_ROUTES.link)
  link(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
    @Body() body: ProofDto,
    @Req() req: Request,
  ): Promise<{ user_id: string; linked_identity: LinkedIdentity }> {
    return this.linking.link(guestContext(req, this.config, tenantId, body), player, body.proof_id);
  }

  @Route(ME_IDENTITY_ROUTES.unlink)
  unlink(
    @Param('tenantId', TenantIdPipe) _tenantId: string,
    @CurrentPrincipal('guest') player: PrincipalOf<'guest'>,
    @Param('provider') provider: string,
    @Param('providerSubject') providerSubject: string,
  ): Promise<{ unlinked: true }> {
    return this.linking.unlink(player, provider, providerSubject);
  }
}
