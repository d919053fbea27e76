import { Body, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Route } from '../http/route';
import { guestContext, sendWithFlowCookie } from './browser-flows';
import { GUEST_PROOF_ROUTES } from './guest-proofs.routes';
import { TenantEmailStartDto, TenantEmailVerifyDto } from './guest.dto';
import { TenantEmailService } from './tenant-email.service';
import { TenantIdPipe } from './tenant-id.pipe';

@Controller()
export class TenantEmailController {
  constructor(
    private readonly email: TenantEmailService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(GUEST_PROOF_ROUTES.emailStart)
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailStartDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ expires_in: number }> {
    return sendWithFlowCookie(res, await this.email.start(guestContext(req, this.config, tenantId, body), body.email));
  }

  @Route(GUEST_PROOF_ROUTES.emailVerify)
  verify(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailVerifyDto,
    @Req() req: Request,
  ): Promise<{ proof_id: string; expires_in: number }> {
    return this.email.verify(guestContext(req, this.config, tenantId, body), body.email, body.code);
  }
}
