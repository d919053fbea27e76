import { Body, Controller, Inject, Req } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { clientNetwork } from '../http/client-ip';
import { readCookie } from '../http/cookies';
import { Route } from '../http/route';
import { CONTROL_FLOW_COOKIE } from './control-flows.store';
import { EmailSignInService, type EmailRequestContext } from './email-sign-in.service';
import { EmailConfirmDto, EmailStartDto } from './management-auth.dto';
import { MANAGEMENT_AUTH_ROUTES } from './management-auth.routes';

@Controller()
export class EmailSignInController {
  constructor(
    private readonly signIn: EmailSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(MANAGEMENT_AUTH_ROUTES.emailStart)
  start(@Body() body: EmailStartDto, @Req() req: Request): Promise<{ expires_in: number }> {
    return this.signIn.start(this.context(req, body.flow_id), body.email);
  }

  @Route(MANAGEMENT_AUTH_ROUTES.emailConfirm)
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
