import { Injectable } from '@nestjs/common';
import { ReplayAlarm } from '../directory/replay-alarm';
import { AppError } from '../errors/app-error';
import type { Grant } from '../http/grant-table';
import { MetricsService } from '../platform/metrics/metrics.service';
import { SessionStore } from '../platform/session-store/session-store';
import type { ClientTokenRequest } from './client-token-request';
import { ManagementTokens } from './management-tokens';
import { tokenResponse, type TokenResponse } from './token-response';
import { CONTROL_PLANE_KIND, CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';

export interface RefreshTokenInput {
  readonly clientId: string;
  readonly refreshToken: string;
}

/** RFC 6749 section 6 with rotation (spec 2.2): a token of an earlier generation revokes the session. */
@Injectable()
export class RefreshTokenGrant implements Grant<ClientTokenRequest, RefreshTokenInput, TokenResponse> {
  constructor(
    private readonly sessions: SessionStore,
    private readonly tokens: ManagementTokens,
    private readonly metrics: MetricsService,
    private readonly replays: ReplayAlarm,
  ) {}

  input({ clientId, body }: ClientTokenRequest): RefreshTokenInput {
    if (!body.refresh_token) throw new AppError('invalid_request', 'refresh_token is required.');
    return { clientId, refreshToken: body.refresh_token };
  }

  async answer({ clientId, refreshToken }: RefreshTokenInput): Promise<TokenResponse> {
    const rotated = await this.sessions.rotate(refreshToken, { tenantId: CONTROL_PLANE_TENANT_ID, clientId });
    if (rotated.outcome === 'replayed') {
      await this.replays.raise({
        realm: CONTROL_PLANE_KIND,
        kind: 'refresh_token',
        tenantId: CONTROL_PLANE_TENANT_ID,
        sessionId: rotated.sessionId,
        subject: rotated.userId,
      });
      throw new AppError('invalid_grant', 'The refresh token was already used; the session is revoked.');
    }
    if (rotated.outcome !== 'rotated') throw new AppError('invalid_grant', 'The refresh token is invalid or expired.');
    const s = rotated.session;
    this.metrics.tokensIssued.inc({ realm: CONTROL_PLANE_KIND, grant: 'refresh_token' });
    const issued = await this.tokens.issue({ userId: s.userId, sessionId: s.sessionId, scope: s.scope });
    return tokenResponse(issued, s.sessionId, s.scope, rotated.refreshToken);
  }
}
