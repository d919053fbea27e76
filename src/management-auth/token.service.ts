import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditTrail } from '../directory/audit-trail.repository';
import { consoleCallbackUri } from '../directory/control-plane-seed.service';
import { IdentitiesRepository } from '../directory/identities.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { CONTROL_PLANE_TENANT_ID } from '../directory/tenants.repository';
import { AppError } from '../errors/app-error';
import { MetricsService } from '../platform/metrics/metrics.service';
import { SessionStore } from '../platform/session-store/session-store';
import { AuthorizationCodesStore } from './authorization-codes.store';
import { ManagementTokens } from './management-tokens';
import { pkceMatches } from './pkce';

export interface TokenRequest {
  readonly grant_type?: string;
  readonly code?: string;
  readonly redirect_uri?: string;
  readonly code_verifier?: string;
  readonly refresh_token?: string;
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
  readonly session_id: string;
}

const invalidGrant = (description: string): AppError => new AppError('invalid_grant', description);

/** The management token endpoint: authorization code with PKCE and rotating refresh only. */
@Injectable()
export class TokenService {
  private readonly logger = new Logger('ManagementTokenService');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly codes: AuthorizationCodesStore,
    private readonly sessions: SessionStore,
    private readonly sessionRecords: SessionRecordsRepository,
    private readonly identities: IdentitiesRepository,
    private readonly tokens: ManagementTokens,
    private readonly metrics: MetricsService,
    private readonly audit: AuditTrail,
  ) {}

  async exchange(clientId: string, req: TokenRequest): Promise<TokenResponse> {
    switch (req.grant_type) {
      case 'authorization_code':
        return this.authorizationCode(clientId, req);
      case 'refresh_token':
        return this.refresh(clientId, req);
      case undefined:
        throw new AppError('invalid_request', 'grant_type is required.');
      default:
        throw new AppError('unsupported_grant_type');
    }
  }

  private async authorizationCode(clientId: string, req: TokenRequest): Promise<TokenResponse> {
    if (!req.code) throw new AppError('invalid_request', 'code is required.');
    // Any exchange attempt consumes the code, even one that fails below (contract section 3).
    const consumed = await this.codes.consume(req.code, this.config.ttl.controlPlaneSession);
    if (consumed.outcome === 'replayed') {
      await this.sessions.revoke(consumed.sessionId, { tombstone: true });
      this.metrics.refreshReplays.inc({ realm: 'control_plane', kind: 'authorization_code' });
      this.logger.warn({ sid: consumed.sessionId }, 'authorization code replayed; session revoked');
      await this.audit.record({
        type: 'refresh.replayed',
        tenantId: CONTROL_PLANE_TENANT_ID,
        subject: consumed.sessionId,
        data: { kind: 'authorization_code', session_id: consumed.sessionId },
      });
      throw invalidGrant('The authorization code was already used.');
    }
    if (consumed.outcome === 'unknown') throw invalidGrant('The authorization code is invalid or expired.');
    const grant = consumed.grant;
    if (grant.clientId !== clientId) throw invalidGrant('The authorization code was issued to another client.');
    if (req.redirect_uri !== grant.redirectUri || grant.redirectUri !== consoleCallbackUri(this.config)) {
      throw invalidGrant('redirect_uri does not match the authorization request.');
    }
    if (!pkceMatches(req.code_verifier, grant.codeChallenge)) throw invalidGrant('The PKCE verifier does not match.');

    const user = await this.identities.findUser(grant.userId);
    if (!user || user.status !== 'active' || user.tenantId !== CONTROL_PLANE_TENANT_ID)
      throw invalidGrant('The user is not active.');
    // The access token is signed (on the thread pool) while the session is written; if the
    // session cannot be started, the token is dropped unseen.
    const [issued, refreshToken] = await Promise.all([
      this.tokens.issue({ userId: user.id, sessionId: grant.sessionId, scope: grant.scope }),
      this.startSession(clientId, user.id, grant),
    ]);
    this.metrics.tokensIssued.inc({ realm: 'control_plane', grant: 'authorization_code' });
    return answer(issued, grant.sessionId, grant.scope, refreshToken);
  }

  /** The session row, the live session and the audit row of a sign-in; returns the refresh token. */
  private async startSession(
    clientId: string,
    userId: string,
    grant: { sessionId: string; scope: string; email: string },
  ): Promise<string> {
    await this.sessionRecords.record(
      { id: grant.sessionId, tenantId: CONTROL_PLANE_TENANT_ID, userId, clientId },
      this.config.ttl.controlPlaneSession,
    );
    const created = await this.sessions.create(
      {
        sessionId: grant.sessionId,
        tenantId: CONTROL_PLANE_TENANT_ID,
        userId,
        clientId,
        scope: grant.scope,
        email: grant.email,
      },
      this.config.ttl.controlPlaneSession,
    );
    if (!created.created) throw invalidGrant('The authorization code was already used.');
    // Contract 12: one row per sign-in, ids only.
    await this.audit.record({
      type: 'control_plane.signed_in',
      tenantId: CONTROL_PLANE_TENANT_ID,
      subject: userId,
      data: { session_id: grant.sessionId, client_id: clientId },
    });
    return created.refreshToken;
  }

  private async refresh(clientId: string, req: TokenRequest): Promise<TokenResponse> {
    if (!req.refresh_token) throw new AppError('invalid_request', 'refresh_token is required.');
    const rotated = await this.sessions.rotate(req.refresh_token, { tenantId: CONTROL_PLANE_TENANT_ID, clientId });
    if (rotated.outcome !== 'rotated') {
      if (rotated.outcome === 'replayed') {
        this.logger.warn('refresh token replayed; session revoked');
        this.metrics.refreshReplays.inc({ realm: 'control_plane', kind: 'refresh_token' });
        await this.audit.record({
          type: 'refresh.replayed',
          tenantId: CONTROL_PLANE_TENANT_ID,
          subject: rotated.userId,
          data: { kind: 'refresh_token', session_id: rotated.sessionId },
        });
      }
      throw invalidGrant(
        rotated.outcome === 'replayed'
          ? 'The refresh token was already used; the session is revoked.'
          : 'The refresh token is invalid or expired.',
      );
    }
    const s = rotated.session;
    this.metrics.tokensIssued.inc({ realm: 'control_plane', grant: 'refresh_token' });
    const issued = await this.tokens.issue({ userId: s.userId, sessionId: s.sessionId, scope: s.scope });
    return answer(issued, s.sessionId, s.scope, rotated.refreshToken);
  }
}

function answer(
  issued: { token: string; expiresIn: number },
  sessionId: string,
  scope: string,
  refreshToken: string,
): TokenResponse {
  return {
    access_token: issued.token,
    token_type: 'Bearer',
    expires_in: issued.expiresIn,
    refresh_token: refreshToken,
    scope,
    session_id: sessionId,
  };
}
