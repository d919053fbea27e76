import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditTrail } from '../directory/audit-trail.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError } from '../errors/app-error';
import { MetricsService } from '../platform/metrics/metrics.service';
import { RefreshTokens } from '../platform/session-store/refresh-tokens';
import { SessionStore, type SessionView } from '../platform/session-store/session-store';
import { CustomerSessions, type CustomerTokenSet, type Issued } from './customer-sessions';
import { CustomerTokens } from './customer-tokens';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { TenantClients } from './tenant-clients';

/** `POST /t/{tenantId}/token` (rotating refresh, replay revokes) and `revoke` (RFC 7009). */
@Injectable()
export class CustomerTokenService {
  private readonly logger = new Logger('CustomerTokens');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly sessions: SessionStore,
    private readonly records: SessionRecordsRepository,
    private readonly customerSessions: CustomerSessions,
    private readonly tokens: CustomerTokens,
    private readonly metrics: MetricsService,
    private readonly accounts: GuestAccountsRepository,
    private readonly audit: AuditTrail,
    private readonly refreshTokens: RefreshTokens,
  ) {}

  /**
   * `cookieToken` is the client's HttpOnly refresh cookie (issue 22 finding 7); a token in the body
   * wins over it, so a caller that holds its token itself is never overridden by a cookie.
   */
  async refresh(
    tenantId: string,
    body: { grant_type?: string; refresh_token?: string; client_id?: string },
    cookieToken?: string,
  ): Promise<Issued<CustomerTokenSet>> {
    if (body.grant_type !== 'refresh_token')
      throw new AppError(body.grant_type ? 'unsupported_grant_type' : 'invalid_request');
    const presented = body.refresh_token || cookieToken;
    if (!presented || !body.client_id)
      throw new AppError('invalid_request', 'refresh_token (or the refresh cookie) and client_id are required.');
    const client = await this.clients.resolve(tenantId, body.client_id);
    // A client without offline_access never received a refresh token to present.
    if (!client.scopes.includes('offline_access')) throw new AppError('unauthorized_client');
    const { idleTtl, absoluteTtl, refreshReuseInterval } = this.config.customerSessions;
    const rotated = await this.sessions.rotate(
      presented,
      { tenantId, clientId: client.id },
      {
        // A session an upgrade has marked is refused once that upgrade committed (spec 4.3 rule 4).
        superseded: (sid) => this.records.isRevoked(sid),
        // Contract 13: two tabs, or a retry after a lost answer, keep the session.
        reuseIntervalMs: refreshReuseInterval * 1000,
        // Contract 13: every refresh gives the session a fresh idle lifetime.
        slide: (sid) => this.records.slide(sid, { idleSeconds: idleTtl, absoluteSeconds: absoluteTtl }),
      },
    );
    if (rotated.outcome !== 'rotated') {
      if (rotated.outcome === 'replayed') {
        this.logger.warn({ tenant: tenantId }, 'refresh token replayed; session revoked');
        this.metrics.refreshReplays.inc({ realm: 'customer', kind: 'refresh_token' });
        await this.audit.record({
          type: 'refresh.replayed',
          tenantId,
          subject: rotated.userId,
          data: { kind: 'refresh_token', session_id: rotated.sessionId, client_id: client.id },
        });
      }
      throw new AppError('invalid_grant');
    }
    const s = rotated.session;
    // A session written before sessions recorded it: whether its subject is still a guest.
    const guest = s.guest ?? (await this.accounts.isActiveGuest(tenantId, s.userId));
    const answer = await this.customerSessions.tokenSet(
      client,
      { userId: s.userId, sessionId: s.sessionId, scope: s.scope, guest },
      rotated.refreshToken,
    );
    return { answer, client };
  }

  /**
   * RFC 7009: the answer is 200 whether or not the token was known; 503 when nothing could be
   * stored. Without a token in the body, the client's refresh cookie is revoked (finding 7).
   *
   * The `session.revoked` row (contract 12) goes before the revocation (issue 22, point 6), as on
   * the control plane (session-revocation.service.ts): a Redis revocation cannot share a PostgreSQL
   * transaction, so the row records the intent, and a revocation that then fails leaves the row and
   * a 503, the safe side. Only a token this service issued, of a live session of this tenant and
   * client, gets a row, so unknown or forged tokens (a session id is in every access token) still
   * answer 200 and write nothing.
   */
  async revoke(tenantId: string, body: { token?: string; client_id?: string }, cookieToken?: string): Promise<void> {
    const token = body.token || cookieToken;
    if (!token || !body.client_id)
      throw new AppError('invalid_request', 'token (or the refresh cookie) and client_id are required.');
    const client = await this.clients.resolve(tenantId, body.client_id);
    const claims = await this.tokens.verifyAccess(token, tenantId);
    if (claims) {
      if (claims.clientId !== client.id || !(await this.liveSession(tenantId, client.id, claims.sid))) return;
      await this.recordRevocation(tenantId, claims.sub, claims.sid, client.id);
      await this.sessions.revoke(claims.sid);
      return;
    }
    // The MAC is checked here, before any row: the store checks it again, with the session's secret.
    const parsed = this.refreshTokens.parse(token);
    if (!parsed || parsed.format === 'digest') return;
    const session = await this.liveSession(tenantId, client.id, parsed.sessionId);
    if (!session) return;
    await this.recordRevocation(tenantId, session.userId, session.sessionId, client.id);
    // Null here leaves a row without an effect: a concurrent revocation of the session, or a token of
    // the format before secrets for a session that has moved to one (refused without revoking,
    // docs/security.md); either takes a token this service issued.
    await this.sessions.revokeByRefreshToken(token, { tenantId, clientId: client.id });
  }

  /** The live session of this tenant and client, or null: one Redis read, before any row is written. */
  private async liveSession(tenantId: string, clientId: string, sessionId: string): Promise<SessionView | null> {
    const session = await this.sessions.get(sessionId);
    return session && session.tenantId === tenantId && session.clientId === clientId ? session : null;
  }

  private async recordRevocation(tenantId: string, userId: string, sessionId: string, clientId: string): Promise<void> {
    await this.audit.record({
      type: 'session.revoked',
      tenantId,
      subject: userId,
      data: { session_id: sessionId, client_id: clientId, by: 'client' },
    });
  }
}
