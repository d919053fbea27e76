import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ReplayAlarm } from '../directory/replay-alarm';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { AppError } from '../errors/app-error';
import type { Grant } from '../http/grant-table';
import { SessionStore } from '../platform/session-store/session-store';
import { CustomerSessions, type CustomerTokenSet, type Issued } from './customer-sessions';
import type { CustomerTokenDto } from './guest.dto';
import type { ClientRecord } from '../directory/records';
import { GuestAccountsRepository } from './guest-accounts.repository';
import { SessionRecovery } from './session-recovery.service';
import { TenantClients } from './tenant-clients';

/** A customer token request: the path's tenant, the strict body and the client's refresh cookie. */
export interface CustomerTokenRequest {
  readonly tenantId: string;
  readonly body: CustomerTokenDto;
  readonly cookieToken: string | undefined;
}

export interface CustomerRefreshInput {
  readonly tenantId: string;
  readonly clientId: string;
  readonly refreshToken: string;
}

/**
 * Rotating refresh of a customer session (RFC 6749 section 6, spec 2.2): a token of an earlier
 * generation revokes the session, past the reuse interval of two tabs or a lost answer (contract 13).
 */
@Injectable()
export class CustomerRefreshGrant implements Grant<
  CustomerTokenRequest,
  CustomerRefreshInput,
  Issued<CustomerTokenSet>
> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clients: TenantClients,
    private readonly sessions: SessionStore,
    private readonly records: SessionRecordsRepository,
    private readonly customerSessions: CustomerSessions,
    private readonly accounts: GuestAccountsRepository,
    private readonly replays: ReplayAlarm,
    private readonly recovery: SessionRecovery,
  ) {}

  /**
   * The cookie is the client's HttpOnly refresh cookie (issue 22 finding 7); a token in the body
   * wins over it, so a caller that holds its token itself is never overridden by a cookie.
   */
  input({ tenantId, body, cookieToken }: CustomerTokenRequest): CustomerRefreshInput {
    const refreshToken = body.refresh_token || cookieToken;
    if (!refreshToken || !body.client_id)
      throw new AppError('invalid_request', 'refresh_token (or the refresh cookie) and client_id are required.');
    return { tenantId, clientId: body.client_id, refreshToken };
  }

  async answer(input: CustomerRefreshInput): Promise<Issued<CustomerTokenSet>> {
    const { tenantId } = input;
    const client = await this.clients.resolve(tenantId, input.clientId);
    // A client without offline_access never received a refresh token to present.
    if (!client.scopes.includes('offline_access')) throw new AppError('unauthorized_client');
    const { idleTtl, absoluteTtl, refreshReuseInterval } = this.config.customerSessions;
    const rotated = await this.sessions.rotate(
      input.refreshToken,
      { tenantId, clientId: client.id },
      {
        // A session an upgrade has marked is refused once that upgrade committed (spec 4.3 rule 4).
        superseded: (sid) => this.records.isRevoked(sid),
        // Contract 13: two tabs, or a retry after a lost answer, keep the session.
        reuseIntervalMs: refreshReuseInterval * 1000,
        // Contract 13: every refresh gives the session a fresh idle lifetime.
        slide: (sid, binding, generation) =>
          this.records.slide(sid, binding, { idleSeconds: idleTtl, absoluteSeconds: absoluteTtl }, generation),
        // Contract 13: a session Redis lost is rebuilt from its row when that is safe.
        recover: (lost) => this.recovery.recover(lost),
        // Contract 13: an upgrade's answer lost, or never sent after its commit, is handed over.
        handOver: (sid, binding) => this.records.handOver(sid, binding, refreshReuseInterval),
        recoverSuccessor: (lost) => this.recovery.recoverSuccessor(lost),
        // The row follows the secret a replacement took over, or that session could not be rebuilt.
        tookOver: (sid, digest) => this.records.keepSecretDigest(sid, digest),
      },
    );
    if (rotated.outcome === 'replayed')
      await this.replays.raise({
        realm: 'customer',
        kind: 'refresh_token',
        tenantId,
        sessionId: rotated.sessionId,
        subject: rotated.userId,
        clientId: client.id,
      });
    if (rotated.outcome !== 'rotated') throw new AppError('invalid_grant');
    const s = rotated.session;
    // A session written before sessions recorded it: whether its subject is still a guest.
    const guest = s.guest ?? (await this.accounts.isActiveGuest(tenantId, s.userId));
    const answer = await this.customerSessions.tokenSet(
      client,
      { userId: s.userId, sessionId: s.sessionId, scope: stillAllowed(s.scope, client), guest },
      rotated.refreshToken,
    );
    return { answer, client };
  }
}

/**
 * The session's scope less what its client no longer allows (spec 4.3: the scope is limited to what
 * the client allows). A session keeps the scope it began with, and sessions slide for as long as
 * the player plays (contract 13), so without this a scope an admin took from the client in the
 * console (contract 15) would go on being issued to every player already signed in.
 */
function stillAllowed(scope: string, client: Pick<ClientRecord, 'scopes'>): string {
  return scope
    .split(' ')
    .filter((s) => client.scopes.includes(s))
    .join(' ');
}
