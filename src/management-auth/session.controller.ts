import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { UsePolicy } from '../http/policy.decorator';
import { RevokeSessionDto } from './management-auth.dto';
import { SessionRevocationService } from './session-revocation.service';

export interface ManagementUserResponse {
  readonly user: { readonly id: string; readonly email: string; readonly email_verified: true };
}

/**
 * Session routes called only by the BFF (spec 4.2); all `Cache-Control: no-store`. A revocation
 * that cannot be stored propagates as 503, never as a success.
 */
@Controller('management-auth')
export class SessionController {
  constructor(private readonly revocations: SessionRevocationService) {}

  @Get('current')
  @UsePolicy('bearer:management')
  current(@CurrentPrincipal('management') p: PrincipalOf<'management'>): ManagementUserResponse {
    return { user: { id: p.userId, email: p.email, email_verified: true } };
  }

  @Post('revoke')
  @HttpCode(200)
  @UsePolicy('bearer:management')
  async revoke(@CurrentPrincipal('management') p: PrincipalOf<'management'>): Promise<{ revoked: boolean }> {
    return { revoked: await this.revocations.revokeOwn(p.userId, p.sessionId) };
  }

  @Post('revoke-session')
  @HttpCode(200)
  @UsePolicy('basic:console-client')
  async revokeSession(
    @CurrentPrincipal('console-client') client: PrincipalOf<'console-client'>,
    @Body() body: RevokeSessionDto,
  ): Promise<{ revoked: boolean }> {
    return { revoked: await this.revocations.revokeForClient(client.clientId, body.session_id) };
  }
}
