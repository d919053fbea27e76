import { Injectable } from '@nestjs/common';
import { canonicalEmail, EMAIL_ADDRESS } from '../directory/email-address';
import { PlayerLookupRepository } from '../directory/player-lookup.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { UserDeactivation } from '../directory/user-deactivation';
import { UserErasure } from '../directory/user-erasure';
import { UserRecordsRepository, type UserDetails } from '../directory/user-records.repository';
import { AppError } from '../errors/app-error';
import { SessionStore } from '../platform/session-store/session-store';
import { consoleRecord } from './console-audit';
import { toPlayerSessionView, toPlayerView, type PlayerSessionView, type PlayerView } from './players.dto';
import type { MemberTenantAccess } from './tenant-membership.guard';
import { SESSION_ID_PATTERN, USER_ID_PATTERN } from '../directory/identifiers';

const noSuchPlayer = (): AppError => new AppError('not_found', 'No such player in this tenant.');

/**
 * The console's view and care of a tenant's players (contract 15): find one by exact id or email,
 * inspect its live sessions, end one, deactivate or erase the player. Deactivation and erasure
 * are the admin CLI's own orderings (src/directory/user-deactivation.ts, user-erasure.ts), each
 * write committing with its `console.*` audit row before any Redis effect.
 */
@Injectable()
export class PlayersService {
  constructor(
    private readonly users: UserRecordsRepository,
    private readonly lookup: PlayerLookupRepository,
    private readonly sessionRecords: SessionRecordsRepository,
    private readonly sessions: SessionStore,
    private readonly deactivation: UserDeactivation,
    private readonly erasure: UserErasure,
  ) {}

  async search(access: MemberTenantAccess, q: string): Promise<{ users: PlayerView[] }> {
    const tenantId = access.tenant.id;
    let userIds: string[];
    if (USER_ID_PATTERN.test(q)) userIds = [q];
    else if (EMAIL_ADDRESS.test(canonicalEmail(q))) userIds = await this.lookup.userIdsByEmail(tenantId, q);
    else throw new AppError('invalid_request', 'q must be a user id (usr_…) or an email address.');
    // One address may be verified on identities of several players (an email sign-in and a provider's).
    const users = await Promise.all(userIds.map((id) => this.users.find(tenantId, id)));
    return { users: users.filter((u): u is UserDetails => u !== null).map(toPlayerView) };
  }

  async show(access: MemberTenantAccess, userId: string): Promise<{ user: PlayerView; sessions: PlayerSessionView[] }> {
    const user = await this.player(access, userId);
    const rows = await this.lookup.openSessions(access.tenant.id, user.id);
    // The row says the session may live; Redis says whether it does (a revocation there is final).
    const live = await Promise.all(rows.map((r) => this.sessions.get(r.id)));
    return {
      user: toPlayerView(user),
      sessions: rows.filter((_, i) => live[i]?.userId === user.id).map(toPlayerSessionView),
    };
  }

  async deactivate(access: MemberTenantAccess, userId: string): Promise<{ user: PlayerView }> {
    const user = await this.player(access, userId);
    await this.deactivation.deactivate(access.tenant.id, user.id, 'console', [
      consoleRecord(access, 'user.deactivate', user.id),
    ]);
    return { user: toPlayerView(await this.player(access, userId)) };
  }

  async erase(access: MemberTenantAccess, userId: string): Promise<{ deleted: true }> {
    if (!USER_ID_PATTERN.test(userId)) throw noSuchPlayer();
    const erased = await this.erasure.erase(access.tenant.id, userId, 'console', (e) => [
      consoleRecord(access, 'user.delete', userId, { revoked_sessions: e.revokedSessions }),
    ]);
    if (!erased) throw noSuchPlayer();
    return { deleted: true };
  }

  /** Ends one session of a player of this tenant; its refresh is refused from then on. */
  async revokeSession(access: MemberTenantAccess, sessionId: string): Promise<{ revoked: boolean }> {
    if (!SESSION_ID_PATTERN.test(sessionId)) throw noSuchSession();
    const tenantId = access.tenant.id;
    const owner = await this.sessionRecords.revokeRecorded(tenantId, sessionId, (userId) => [
      { type: 'session.revoked', tenantId, subject: userId, data: { session_id: sessionId, by: 'console' } },
      consoleRecord(access, 'session.revoke', sessionId, { user_id: userId }),
    ]);
    if (!owner) throw noSuchSession();
    return { revoked: await this.sessions.revoke(sessionId, { tombstone: true }) };
  }

  private async player(access: MemberTenantAccess, userId: string): Promise<UserDetails> {
    const user = USER_ID_PATTERN.test(userId) ? await this.users.find(access.tenant.id, userId) : null;
    if (!user) throw noSuchPlayer();
    return user;
  }
}

const noSuchSession = (): AppError => new AppError('not_found', 'No such session in this tenant.');
