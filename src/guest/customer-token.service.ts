import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditTrail } from '../directory/audit-trail.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError } from '../errors/app-error';
import type { ClientEntity } from '../platform/database/entities/client.entity';
import { MetricsService } from '../platform/metrics/metrics.service';
import { SessionStore } from '../platform/session-store/session-store';
import { CustomerSessions, type CustomerTokenSet } from './customer-sessions';
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
  ) {}

  /**
   * `cookieToken` is the client's HttpOnly refresh cookie (issue 22 finding 7); a token in the body
   * wins over it, so a caller that holds its token itself is never overridden by a cookie.
   */
  async refresh(
    tenantId: string,
    body: { grant_type?: string; refresh_token?: string; client_id?: string },
    cookieToken?: string,
  ): Promise<{ tokens: CustomerTokenSet; client: ClientEntity }> {
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
    const tokens = await this.customerSessions.tokenSet(
      client,
      { userId: s.userId, sessionId: s.sessionId, scope: s.scope, guest },
      rotated.refreshToken,
      'refresh_token',
    );
    return { tokens, client };
  }

  /**
   * RFC 7009: the answer is 200 whether or not the token was known; 503 when nothing could be
   * stored. Without a token in the body, the client's refresh cookie is revoked (finding 7).
   */
  async revoke(tenantId: string, body: { token?: string; client_id?: string }, cookieToken?: string): Promise<void> {
    const token = body.token || cookieToken;
    if (!token || !body.client_id)
      throw new AppError('invalid_request', 'token (or the refresh cookie) and client_id are required.');
    const client = await this.clients.resolve(tenantId, body.client_id);
    const claims = await this.tokens.verifyAccess(token, tenantId);
    if (claims) {
      if (claims.clientId === client.id && (await this.sessions.revoke(claims.sid)))
        await this.revoked(tenantId, claims.sub, claims.sid, client.id);
      return;
    }
    const sid = await this.sessions.revokeByRefreshToken(token, { tenantId, clientId: client.id });
    if (sid) await this.revoked(tenantId, sid.userId, sid.sessionId, client.id);
  }

  private async revoked(tenantId: string, userId: string, sessionId: string, clientId: string): Promise<void> {
    await this.audit.record({
      type: 'session.revoked',
      tenantId,
      subject: userId,
      data: { session_id: sessionId, client_id: clientId, by: 'client' },
    });
  }
}
