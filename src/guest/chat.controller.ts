import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { readCookie } from '../http/cookies';
import { IpBudget } from '../http/ip-budget.guard';
import { UsePolicy } from '../http/policy.decorator';
import { flowCookieName, guestContext, sendWithFlowCookie } from './browser-flows';
import { ChatSignInService } from './chat-sign-in.service';
import { ChatCallbackQueryDto, ChatStartQueryDto, FlowBoundDto } from './guest.dto';
import { TenantIdPipe } from './tenant-id.pipe';

@Controller('t/:tenantId/chat')
@UsePolicy('public')
export class ChatController {
  constructor(
    private readonly chat: ChatSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('start')
  @IpBudget('chat-start')
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatStartQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { location } = sendWithFlowCookie(
      res,
      await this.chat.start(guestContext(req, this.config, tenantId, query)),
    );
    res.redirect(302, location);
  }

  /** For pages that open the platform themselves, in a popup or a redirect (contract section 11). */
  @Post('start')
  @HttpCode(200)
  @IpBudget('chat-start')
  startForPage(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: FlowBoundDto,
    @Req() req: Request,
  ): Promise<{ authorize_url: string }> {
    return this.chat.startForPage(guestContext(req, this.config, tenantId, body));
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
    res.redirect(302, location);
  }
}
