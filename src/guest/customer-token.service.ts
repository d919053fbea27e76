import { Injectable } from '@nestjs/common';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError } from '../errors/app-error';
import { GrantTable } from '../http/grant-table';
import { RefreshTokens } from '../platform/session-store/refresh-tokens';
import { SessionStore, type SessionView } from '../platform/session-store/session-store';
import { CustomerRefreshGrant, type CustomerTokenRequest } from './customer-refresh.grant';
import type { CustomerTokenSet, Issued } from './customer-sessions';
import { CustomerTokens } from './customer-tokens';
import type { CustomerTokenDto } from './guest.dto';
import { TenantClients } from './tenant-clients';

/** The grant types of a customer tenant's token endpoint (contract 6): rotating refresh only. */
export const CUSTOMER_GRANT_TYPES = ['refresh_token'] as const;

/** `POST /t/{tenantId}/token` (a table of grants) and `revoke` (RFC 7009). */
@Injectable()
export class CustomerTokenService {
  private readonly grants: GrantTable<
    (typeof CUSTOMER_GRANT_TYPES)[number],
    CustomerTokenRequest,
    Issued<CustomerTokenSet>
  >;

  constructor(
    private readonly clients: TenantClients,
    private readonly sessions: SessionStore,
    private readonly tokens: CustomerTokens,
    private readonly records: SessionRecordsRepository,
    private readonly refreshTokens: RefreshTokens,
    refresh: CustomerRefreshGrant,
  ) {
    this.grants = new GrantTable({ refresh_token: refresh });
  }

  /** `cookieToken` is the client's HttpOnly refresh cookie (issue 22 finding 7). */
  refresh(tenantId: string, body: CustomerTokenDto, cookieToken?: string): Promise<Issued<CustomerTokenSet>> {
    return this.grants.answer(body.grant_type, { tenantId, body, cookieToken });
  }

  /**
   * RFC 7009: the answer is 200 whether or not the token was known; 503 when nothing could be
   * stored. Without a token in the body, the client's refresh cookie is revoked (finding 7).
   *
   * The `session.revoked` row (contract 12), with the session's row marked revoked, goes before the
   * revocation (issue 22, point 6), as on
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
    await this.records.recordRevocation(tenantId, sessionId, [
      {
        type: 'session.revoked',
        tenantId,
        subject: userId,
        data: { session_id: sessionId, client_id: clientId, by: 'client' },
      },
    ]);
  }
}
