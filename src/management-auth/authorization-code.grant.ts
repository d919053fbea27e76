import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditTrail } from '../directory/audit-trail.repository';
import { IdentitiesRepository } from '../directory/identities.repository';
import { ReplayAlarm } from '../directory/replay-alarm';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError } from '../errors/app-error';
import type { Grant } from '../http/grant-table';
import { MetricsService } from '../platform/metrics/metrics.service';
import { SessionStore } from '../platform/session-store/session-store';
import { AuthorizationCodesStore } from './authorization-codes.store';
import type { ClientTokenRequest } from './client-token-request';
import { ManagementTokens } from './management-tokens';
import { pkceMatches } from './pkce';
import { tokenResponse, type TokenResponse } from './token-response';
import { consoleCallbackUri, CONTROL_PLANE_KIND, CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';

export interface AuthorizationCodeInput {
  readonly clientId: string;
  readonly code: string;
  readonly redirectUri: string | undefined;
  readonly codeVerifier: string | undefined;
}

const invalidGrant = (description: string): AppError => new AppError('invalid_grant', description);

/** RFC 6749 section 4.1.3 with PKCE S256 (RFC 7636): the console's code becomes a session. */
@Injectable()
export class AuthorizationCodeGrant implements Grant<ClientTokenRequest, AuthorizationCodeInput, TokenResponse> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly codes: AuthorizationCodesStore,
    private readonly sessions: SessionStore,
    private readonly sessionRecords: SessionRecordsRepository,
    private readonly identities: IdentitiesRepository,
    private readonly tokens: ManagementTokens,
    private readonly metrics: MetricsService,
    private readonly audit: AuditTrail,
    private readonly replays: ReplayAlarm,
  ) {}

  input({ clientId, body }: ClientTokenRequest): AuthorizationCodeInput {
    if (!body.code) throw new AppError('invalid_request', 'code is required.');
    return { clientId, code: body.code, redirectUri: body.redirect_uri, codeVerifier: body.code_verifier };
  }

  async answer(input: AuthorizationCodeInput): Promise<TokenResponse> {
    const { clientId } = input;
    // Any exchange attempt consumes the code, even one that fails below (contract section 3).
    const consumed = await this.codes.consume(input.code, this.config.ttl.controlPlaneSession);
    if (consumed.outcome === 'replayed') {
      await this.sessions.revoke(consumed.sessionId, { tombstone: true });
      // The code's session may never have been created: the session itself is the subject.
      await this.replays.raise({
        realm: CONTROL_PLANE_KIND,
        kind: 'authorization_code',
        tenantId: CONTROL_PLANE_TENANT_ID,
        sessionId: consumed.sessionId,
        subject: consumed.sessionId,
      });
      throw invalidGrant('The authorization code was already used.');
    }
    if (consumed.outcome === 'unknown') throw invalidGrant('The authorization code is invalid or expired.');
    const grant = consumed.grant;
    if (grant.clientId !== clientId) throw invalidGrant('The authorization code was issued to another client.');
    if (input.redirectUri !== grant.redirectUri || grant.redirectUri !== consoleCallbackUri(this.config)) {
      throw invalidGrant('redirect_uri does not match the authorization request.');
    }
    if (!pkceMatches(input.codeVerifier, grant.codeChallenge)) throw invalidGrant('The PKCE verifier does not match.');

    const user = await this.identities.findUser(grant.userId);
    if (!user || user.status !== 'active' || user.tenantId !== CONTROL_PLANE_TENANT_ID)
      throw invalidGrant('The user is not active.');
    // The access token is signed while the session is written; if the session cannot be started,
    // the token is dropped unseen.
    const [issued, refreshToken] = await Promise.all([
      this.tokens.issue({ userId: user.id, sessionId: grant.sessionId, scope: grant.scope }),
      this.startSession(clientId, user.id, grant),
    ]);
    this.metrics.tokensIssued.inc({ realm: CONTROL_PLANE_KIND, grant: 'authorization_code' });
    return tokenResponse(issued, grant.sessionId, grant.scope, refreshToken);
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
}
