import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { clientIp } from '../http/client-ip';
import { readCookie } from '../http/cookies';
import { UsePolicy } from '../http/policy.decorator';
import { flowCookieName } from './browser-flows.store';
import { ChatSignInService } from './chat-sign-in.service';
import { sendWithFlowCookie } from './guest.controller';
import { ChatCallbackQueryDto, ChatStartQueryDto } from './guest.dto';
import { guestContext } from './guest-request';
import { TenantIdPipe } from './tenant-id.pipe';

@Controller('t/:tenantId/chat')
@UsePolicy('public')
export class ChatController {
  constructor(
    private readonly chat: ChatSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('start')
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatStartQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const ctx = guestContext(req, clientIp(req, this.config.trustProxy), tenantId, query, readCookie, flowCookieName);
    const { location } = sendWithFlowCookie(res, await this.chat.start(ctx));
    res.redirect(302, location);
  }

  @Get('callback')
  async callback(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatCallbackQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { location } = await this.chat.callback(tenantId, query, (flowId) =>
      readCookie(req.headers.cookie, flowCookieName(flowId)),
    );
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, location);
  }
}
