import { Body, Controller, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { GrantTypeFirst } from '../http/grant-type-first.guard';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { TokenRequestDto } from './management-auth.dto';
import { MANAGEMENT_AUTH_ROUTES } from './management-auth.routes';
import type { TokenResponse } from './token-response';
import { MANAGEMENT_GRANT_TYPES, TokenService } from './token.service';

@Controller()
export class TokenController {
  constructor(private readonly tokens: TokenService) {}

  @Route(MANAGEMENT_AUTH_ROUTES.token)
  @UseGuards(new GrantTypeFirst(MANAGEMENT_GRANT_TYPES))
  token(
    @CurrentPrincipal('console-client') client: PrincipalOf<'console-client'>,
    @Body() body: TokenRequestDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse> {
    res.setHeader('Pragma', 'no-cache');
    return this.tokens.exchange({ clientId: client.clientId, body });
  }
}
