import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { clientIp } from '../http/client-ip';
import { readCookie } from '../http/cookies';
import { UsePolicy } from '../http/policy.decorator';
import { flowCookieName } from './browser-flows.store';
import { sendWithFlowCookie } from './guest.controller';
import { TenantEmailStartDto, TenantEmailVerifyDto } from './guest.dto';
import { guestContext } from './guest-request';
import { TenantEmailService } from './tenant-email.service';
import { TenantIdPipe } from './tenant-id.pipe';

@Controller('t/:tenantId/email')
@UsePolicy('public')
export class TenantEmailController {
  constructor(
    private readonly email: TenantEmailService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('start')
  @HttpCode(202)
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailStartDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ expires_in: number }> {
    const ctx = guestContext(req, clientIp(req, this.config.trustProxy), tenantId, body, readCookie, flowCookieName);
    return sendWithFlowCookie(res, await this.email.start(ctx, body.email));
  }

  @Post('verify')
  @HttpCode(200)
  verify(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailVerifyDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ proof_id: string; expires_in: number }> {
    res.setHeader('Cache-Control', 'no-store');
    const ctx = guestContext(req, clientIp(req, this.config.trustProxy), tenantId, body, readCookie, flowCookieName);
    return this.email.verify(ctx, body.email, body.code);
  }
}
