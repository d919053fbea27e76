import { Body, Controller, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Route } from '../http/route';
import { cookieReader, sendBounce, sendCallbackResult, sendStart } from './binding-redirects';
import { guestContext, sendWithFlowCookie } from './browser-flows';
import { withQuery } from './callback-redirect';
import { ChatStartQueryDto, FlowBoundDto } from './guest.dto';
import {
  ProviderBounceQueryDto,
  ProviderCallbackQueryDto,
  ProviderFormPostDto,
  ProviderTokenDto,
} from './provider.dto';
import { ProviderIdPipe } from './provider-id.pipe';
import { ProviderSignInService } from './provider-sign-in.service';
import { PROVIDER_ROUTES } from './providers.routes';
import { TenantIdPipe } from './tenant-id.pipe';

/** Sign-in with a tenant's OpenID Connect providers (contract 14): browser and native flows. */
@Controller()
export class ProvidersController {
  constructor(
    private readonly providers: ProviderSignInService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(PROVIDER_ROUTES.start)
  async start(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Param('providerId', ProviderIdPipe) providerId: string,
    @Query() query: ChatStartQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    sendStart(res, await this.providers.start(guestContext(req, this.config, tenantId, query), providerId));
  }

  @Route(PROVIDER_ROUTES.startForPage)
  startForPage(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Param('providerId', ProviderIdPipe) providerId: string,
    @Body() body: FlowBoundDto,
    @Req() req: Request,
  ): Promise<{ authorize_url: string }> {
    return this.providers.startForPage(guestContext(req, this.config, tenantId, body), providerId);
  }

  @Route(PROVIDER_ROUTES.bounce)
  async bounce(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ProviderBounceQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    sendBounce(res, await this.providers.bounce(tenantId, query.handle));
  }

  @Route(PROVIDER_ROUTES.callback)
  async callback(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Query() query: ProviderCallbackQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    sendCallbackResult(res, await this.providers.callback(tenantId, query, cookieReader(req)));
  }

  /**
   * Sign in with Apple's `response_mode=form_post`: a cross-site POST, which carries no SameSite=Lax
   * cookie, so the browser binding cannot be checked here. It is sent on as a GET to the callback
   * (303), a top-level navigation that carries the flow's or the bounce's cookie; the state, bound
   * server-side to that cookie, is what protects the flow. Nothing is read or written here.
   */
  @Route(PROVIDER_ROUTES.formPostCallback)
  formPostCallback(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: ProviderFormPostDto,
    @Res() res: Response,
  ): void {
    const params: Record<string, string> = { state: body.state };
    if (body.code !== undefined) params.code = body.code;
    if (body.error !== undefined) params.error = body.error;
    if (body.iss !== undefined) params.iss = body.iss;
    res.redirect(
      303,
      withQuery(`${this.config.authOrigin}/t/${encodeURIComponent(tenantId)}/providers/callback`, params),
    );
  }

  @Route(PROVIDER_ROUTES.nativeToken)
  async nativeToken(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Param('providerId', ProviderIdPipe) providerId: string,
    @Body() body: ProviderTokenDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ proof_id: string; expires_in: number }> {
    return sendWithFlowCookie(
      res,
      await this.providers.nativeToken(
        guestContext(req, this.config, tenantId, body),
        providerId,
        body.id_token,
        body.nonce,
      ),
    );
  }
}
