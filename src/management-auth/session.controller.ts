import { Body, Controller } from '@nestjs/common';
import { CurrentPrincipal, type PrincipalOf } from '../http/principal';
import { Route } from '../http/route';
import { RevokeSessionDto } from './management-auth.dto';
import { MANAGEMENT_AUTH_ROUTES } from './management-auth.routes';
import { SessionRevocationService } from './session-revocation.service';

export interface ManagementUserResponse {
  readonly user: { readonly id: string; readonly email: string; readonly email_verified: true };
}

/**
 * Session routes called only by the BFF (spec 4.2); all `Cache-Control: no-store`. A revocation
 * that cannot be stored propagates as 503, never as a success.
 */
@Controller()
export class SessionController {
  constructor(private readonly revocations: SessionRevocationService) {}

  @Route(MANAGEMENT_AUTH_ROUTES.current)
  current(@CurrentPrincipal('management') p: PrincipalOf<'management'>): ManagementUserResponse {
    return { user: { id: p.userId, email: p.email, email_verified: true } };
  }

  @Route(MANAGEMENT_AUTH_ROUTES.revoke)
  async revoke(@CurrentPrincipal('management') p: PrincipalOf<'management'>): Promise<{ revoked: boolean }> {
    return { revoked: await this.revocations.revokeOwn(p.userId, p.sessionId) };
  }

  @Route(MANAGEMENT_AUTH_ROUTES.revokeSession)
  async revokeSession(
    @CurrentPrincipal('console-client') client: PrincipalOf<'console-client'>,
    @Body() body: RevokeSessionDto,
  ): Promise<{ revoked: boolean }> {
    return { revoked: await this.revocations.revokeForClient(client.clientId, body.session_id) };
  }
}
