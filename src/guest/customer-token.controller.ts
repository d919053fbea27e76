import { Body, Controller, Inject, Param, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../errors/app-error';
import { GrantTypeFirst } from '../http/grant-type-first.guard';
import { Route } from '../http/route';
import type { CustomerTokenSet } from './customer-sessions';
import { CUSTOMER_TOKEN_ROUTES } from './customer-token.routes';
import { CUSTOMER_GRANT_TYPES, CustomerTokenService } from './customer-token.service';
import { CustomerRevokeDto, CustomerTokenDto } from './guest.dto';
import { clearRefreshCookie, readRefreshCookie, withRefreshCookie } from './refresh-cookie';
import { TenantIdPipe } from './tenant-id.pipe';

/**
 * Public clients (browser and native) authenticate by client_id only, as RFC 6749 allows. A browser
 * client's refresh token also travels in its HttpOnly refresh cookie (issue 22 finding 7): used
 * when the body names none, renewed with every rotation, expired when it is refused or revoked.
 * Cross-site request forgery cannot spend it: a POST whose Origin is not a web origin of the named
 * client is refused before this runs (tenant-cors.ts, contract 11).
 */
@Controller()
export class CustomerTokenController {
  constructor(
    private readonly tokens: CustomerTokenService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Route(CUSTOMER_TOKEN_ROUTES.token)
  @UseGuards(new GrantTypeFirst(CUSTOMER_GRANT_TYPES))
  async token(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: CustomerTokenDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CustomerTokenSet> {
    const cookie = body.client_id ? readRefreshCookie(req, tenantId, body.client_id) : undefined;
    try {
      return withRefreshCookie(req, res, await this.tokens.refresh(tenantId, body, cookie), this.config);
    } catch (err) {
      // A dead session's cookie is dropped, so the browser stops presenting it; a refused body
      // token says nothing about another token the cookie may hold.
      if (err instanceof AppError && err.code === 'invalid_grant' && usedCookie(body.refresh_token, cookie))
        clearRefreshCookie(req, res, tenantId, body.client_id as string);
      throw err;
    }
  }

  @Route(CUSTOMER_TOKEN_ROUTES.revoke)
  async revoke(
    @Param('tenantId', TenantIdPipe) tenantId: string,
    @Body() body: CustomerRevokeDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, never>> {
    const cookie = body.client_id ? readRefreshCookie(req, tenantId, body.client_id) : undefined;
    await this.tokens.revoke(tenantId, body, cookie);
    if (usedCookie(body.token, cookie)) clearRefreshCookie(req, res, tenantId, body.client_id as string);
    return {};
  }
}

/** The cookie's token was the one presented: the body named none, or named the same. */
function usedCookie(bodyToken: string | undefined, cookie: string | undefined): cookie is string {
  return cookie !== undefined && (!bodyToken || bodyToken === cookie);
}
