import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { clientNetwork } from '../http/client-ip';
import { readCookie } from '../http/cookies';
import { UsePolicy } from '../http/policy.decorator';
import { CONTROL_FLOW_COOKIE } from './control-flows.store';
import { EmailSignInService, type EmailRequestContext } from './email-sign-in.service';
import { EmailConfirmDto, EmailStartDto } from './management-auth.dto';

@Controller('management-auth/email')
@UsePolicy('origin:auth')
export class EmailSignInController {
  constructor(
    private readonly signIn: EmailSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('start')
  @HttpCode(202)
  start(@Body() body: EmailStartDto, @Req() req: Request): Promise<{ expires_in: number }> {
    return this.signIn.start(this.context(req, body.flow_id), body.email);
  }

  @Post('confirm')
  @HttpCode(200)
  confirm(@Body() body: EmailConfirmDto, @Req() req: Request): Promise<{ redirect_to: string }> {
    return this.signIn.confirm(this.context(req, body.flow_id), body.email, body.code);
  }

  private context(req: Request, flowId: string): EmailRequestContext {
    return {
      flowId,
      flowCookie: readCookie(req.headers.cookie, CONTROL_FLOW_COOKIE),
      ip: clientNetwork(req, this.config.trustProxy),
    };
  }
}
