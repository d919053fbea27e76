import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { IpBudget } from '../http/ip-budget.guard';
import { UsePolicy } from '../http/policy.decorator';
import { guestContext, sendWithFlowCookie } from './browser-flows';
import { TenantEmailStartDto, TenantEmailVerifyDto } from './guest.dto';
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
  @IpBudget('email-start')
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailStartDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ expires_in: number }> {
    return sendWithFlowCookie(res, await this.email.start(guestContext(req, this.config, tenantId, body), body.email));
  }

  @Post('verify')
  @HttpCode(200)
  @IpBudget('email-verify')
  verify(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: TenantEmailVerifyDto,
    @Req() req: Request,
  ): Promise<{ proof_id: string; expires_in: number }> {
    return this.email.verify(guestContext(req, this.config, tenantId, body), body.email, body.code);
  }
}
