import { Body, Controller, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { IsString, Matches } from 'class-validator';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Route } from '../http/route';
import { cookieReader, sendBounce, sendCallbackResult, sendStart } from './binding-redirects';
import { guestContext } from './browser-flows';
import { ChatSignInService } from './chat-sign-in.service';
import { GUEST_PROOF_ROUTES } from './guest-proofs.routes';
import { ChatCallbackQueryDto, ChatStartQueryDto, FlowBoundDto } from './guest.dto';
import { TenantIdPipe } from './tenant-id.pipe';

/** `GET chat/go?handle=`: the one-time handle of a page's `authorize_url` (a 256-bit secret). */
export class ChatBounceQueryDto {
  @IsString() @Matches(/^[A-Za-z0-9_-]{43}$/) handle!: string;
}

@Controller()
export class ChatController {
  constructor(
    private readonly chat: ChatSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(GUEST_PROOF_ROUTES.chatStart)
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatStartQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    sendStart(res, await this.chat.start(guestContext(req, this.config, tenantId, query)));
  }

  @Route(GUEST_PROOF_ROUTES.chatStartForPage)
  startForPage(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: FlowBoundDto,
    @Req() req: Request,
  ): Promise<{ authorize_url: string }> {
    return this.chat.startForPage(guestContext(req, this.config, tenantId, body));
  }

  /** Binds the state to the browser that follows the link by a first-party cookie, then goes on to the platform. */
  @Route(GUEST_PROOF_ROUTES.chatBounce)
  async bounce(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatBounceQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    sendBounce(res, await this.chat.bounce(tenantId, query.handle));
  }

  @Route(GUEST_PROOF_ROUTES.chatCallback)
  async callback(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ChatCallbackQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    sendCallbackResult(res, await this.chat.callback(tenantId, query, cookieReader(req)));
  }
}
