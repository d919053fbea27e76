import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { GrantTypeFirst } from '../http/grant-type-first.guard';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { UsePolicy } from '../http/policy.decorator';
import { TokenRequestDto } from './management-auth.dto';
import { TokenService, type TokenResponse } from './token.service';

@Controller('management-auth')
@UsePolicy('basic:console-client')
export class TokenController {
  constructor(private readonly tokens: TokenService) {}

  @Post('token')
  @HttpCode(200)
  @UseGuards(new GrantTypeFirst(['authorization_code', 'refresh_token']))
  token(
    @CurrentPrincipal('console-client') client: PrincipalOf<'console-client'>,
    @Body() body: TokenRequestDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse> {
    res.setHeader('Pragma', 'no-cache');
    return this.tokens.exchange(client.clientId, body);
  }
}
