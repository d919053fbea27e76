import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { IsString, Matches } from 'class-validator';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { expireHostCookie, readCookie, setHostCookie } from '../http/cookies';
import { IpBudget } from '../http/ip-budget.guard';
import { UsePolicy } from '../http/policy.decorator';
import { guestContext, sendWithFlowCookie } from './browser-flows';
import { ChatSignInService } from './chat-sign-in.service';
import { ChatCallbackQueryDto, ChatStartQueryDto, FlowBoundDto } from './guest.dto';
import { TenantIdPipe } from './tenant-id.pipe';

/** `GET chat/go?handle=`: the one-time handle of a page's `authorize_url` (a 256-bit secret). */
export class ChatBounceQueryDto {
  @IsString() @Matches(/^[A-Za-z0-9_-]{43}$/) handle!: string;
}

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

  /**
   * The bounce a page's `authorize_url` points at (issue 22, finding 2): binds the state to the
   * browser that follows the link by a first-party cookie, then goes on to the platform. It writes
   * a state for an anonymous caller, so it takes the chat-start budget first (contract section 10):
   * one page flow is a `POST chat/start` and one bounce.
   */
  @Get('go')
  @IpBudget('chat-start')
  async bounce(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatBounceQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const { location, bindingCookie } = await this.chat.bounce(tenantId, query.handle);
    // Lax: the platform's redirect back to the callback is a top-level GET, which carries it.
    setHostCookie(res, bindingCookie.name, bindingCookie.value, bindingCookie.maxAgeSeconds, 'lax');
    res.redirect(302, location);
  }

  @Get('callback')
  async callback(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatCallbackQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { location, spentCookie } = await this.chat.callback(tenantId, query, (name) =>
      readCookie(req.headers.cookie, name),
    );
    if (spentCookie) expireHostCookie(res, spentCookie, 'lax');
    res.redirect(302, location);
  }
}
