import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isPristineProvisionalUser } from './pristine-provisional-user';
import { canSignIn, type HeldIdentity } from './sign-in-reach';
import { countTodaySql } from '../directory/daily-stats.repository';
import { newRecordId } from '../directory/identifiers';
import type { ClientRecord } from '../directory/records';
import type { RecoverableSession } from '../directory/session-records.repository';
import { PreparedStatement } from '../platform/database/prepared-statement';
import { bool, count, decodeFirst, decodeRows, nullableText, rowsOf, text } from '../platform/database/row-decoders';

/** Guest creation's one statement (createGuestWithSession); prepared, it is the route's hottest. */
const CREATE_GUEST_WITH_SESSION = new PreparedStatement(
  'create-guest-with-session',
  `WITH c AS (
      SELECT 1 FROM clients c JOIN tenants t ON t.id = c.tenant_id
       WHERE c.id = $4 AND c.tenant_id = $2 AND c.enabled AND c.type = $6 AND c.scopes = $7::text[]
         AND t.status = 'active' AND t.kind = 'customer'),
    u AS (INSERT INTO users (id, tenant_id, kind, status) SELECT $1, $2, 'guest', 'active' FROM c RETURNING id),
    -- The day's count of guests (contract 15's chart).
    counted AS (${countTodaySql('guests_created', '$2', 'FROM u')})
    INSERT INTO sessions (id, tenant_id, user_id, client_id, expires_at, secret_digest, scope, guest)
    SELECT $3, $2, u.id, $4, clock_timestamp() + make_interval(secs => $5), $8, $9, $10 FROM u RETURNING id`,
);

/**
 * `not_guest`: the subject stopped being an active guest (a parallel upgrade of it won first).
 * `gone`: nobody holds the proven identity any more (unlinked or erased since the proof was issued).
 */
export type MoveOutcome = 'moved' | 'already_owned' | 'not_guest' | 'in_use' | 'gone';

/**
 * The persistence of guest accounts: guest users, the credential move of an upgrade (spec 4.3
 * rule 6). The only place that writes these rows with row locks.
 */
@Injectable()
export class GuestAccountsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * The guest user and its first session row in one statement (atomic on its own, one round
   * trip: guest creation is the hot unauthenticated path). The statement re-checks the client row
   * the caller was given: still enabled, of the same type and scopes, of an active customer tenant.
   * Returns null, writing nothing, when the row has changed.
   */
  async createGuestWithSession(
    client: ClientRecord,
    sessionId: string,
    ttlSeconds: number,
    recoverable: RecoverableSession,
  ): Promise<string | null> {
    const id = newRecordId('user');
    const rows = rowsOf(
      await CREATE_GUEST_WITH_SESSION.run(this.db, [
        id,
        client.tenantId,
        sessionId,
        client.id,
        ttlSeconds,
        client.type,
        client.scopes,
        recoverable.secretDigest,
        recoverable.scope,
        recoverable.guest,
      ]),
    );
    return rows.length === 1 ? id : null;
  }

  /** The database clock, so "created after the intent" compares like with like. */
  async now(): Promise<number> {
    const [row = {}] = rowsOf(
      await this.db.query('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms'),
    );
    return count(row, 'ms');
  }

  async isActiveGuest(tenantId: string, userId: string): Promise<boolean> {
    return this.isActive(tenantId, userId, 'guest');
  }

  /** An active user of this kind: a guest, or a full account (`regular`, contract 14 linking). */
  async isActive(tenantId: string, userId: string, kind: 'guest' | 'regular'): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(`SELECT 1 FROM users WHERE id = $1 AND tenant_id = $2 AND kind = $3 AND status = 'active'`, [
        userId,
        tenantId,
        kind,
      ]),
    );
    return rows.length === 1;
  }

  /**
   * Sign-in with a proof (contract 6: the account that owns the proven credential): the active user
   * that holds the proven identity now, a provisional one becoming a regular account; null when no
   * active user holds it. A proof outlives a change of its credential's owner, so the owner is read
   * here, not taken from the proof: an unlinked or erased credential signs in to nobody, and one an
   * upgrade moved since the proof was issued signs in to the guest it moved to (contract 13: a
   * proof refused with 409 identity_in_use signs in). Whoever unlinks or moves it locks the
   * owner's row before changing it, so the second read, after this lock, is current.
   */
  async lockOwnerForSignIn(tenantId: string, identityId: string, m: EntityManager): Promise<string | null> {
    const [identity] = rowsOf(
      await m.query(`SELECT user_id FROM identities WHERE id = $1 AND tenant_id = $2 AND status = 'active'`, [
        identityId,
        tenantId,
      ]),
    );
    if (!identity) return null;
    const userId = text(identity, 'user_id');
    const [user] = rowsOf(
      await m.query('SELECT kind, status FROM users WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [userId, tenantId]),
    );
    if (!user || text(user, 'status') !== 'active') return null;
    const held = rowsOf(
      await m.query(`SELECT 1 FROM identities WHERE id = $1 AND user_id = $2 AND status = 'active'`, [
        identityId,
        userId,
      ]),
    );
    // Moved or removed while this waited for the lock: the player asks again.
    if (held.length !== 1) return null;
    if (text(user, 'kind') === 'provisional')
      await m.query(`UPDATE users SET kind = 'regular' WHERE id = $1`, [userId]);
    return userId;
  }

  /**
   * Moves the identity to the guest `userId` when its owner is a pristine provisional user (spec
   * 4.3 rule 6, isPristineProvisionalUser). The facts the rule needs are read under row locks on
   * the identity and both users, and the owner is deactivated in the same transaction, so
   * concurrent upgrades attach a credential at most once. `to: 'regular'` links it to the full
   * account `userId` instead (contract 14, `me/identities`) under the same rule.
   */
  async moveIdentity(
    m: EntityManager,
    input: { tenantId: string; userId: string; identityId: string; intentCreatedAt: number; to?: 'regular' },
  ): Promise<MoveOutcome> {
    const recipient = rowsOf(
      await m.query(
        `SELECT id FROM users WHERE id = $1 AND tenant_id = $2 AND kind = $3 AND status = 'active' FOR UPDATE`,
        [input.userId, input.tenantId, input.to ?? 'guest'],
      ),
    );
    if (recipient.length !== 1) return 'not_guest';
    const identity = decodeFirst(
      await m.query(
        `SELECT user_id, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms FROM identities WHERE id = $1 AND tenant_id = $2 AND status = 'active' FOR UPDATE`,
        [input.identityId, input.tenantId],
      ),
      (row) => ({ userId: text(row, 'user_id'), createdAt: count(row, 'created_ms') }),
    );
    // Spec 4.3 rule 7's 409 says another user owns the credential; here nobody does, and the proof
    // names an identity that no longer exists: the proof no longer holds (a fresh one resolves the
    // credential anew).
    if (!identity) return 'gone';
    if (identity.userId === input.userId) return 'already_owned';
    const owner = decodeFirst(
      await m.query(
        `SELECT u.kind, u.status, (extract(epoch FROM u.created_at) * 1000)::bigint AS created_ms,
              (SELECT count(*) FROM identities i WHERE i.user_id = u.id)::int AS identities,
              EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id) AS had_session,
              EXISTS (SELECT 1 FROM memberships ms WHERE ms.user_id = u.id) AS had_membership,
              EXISTS (SELECT 1 FROM consents c WHERE c.user_id = u.id) AS had_consent
         FROM users u WHERE u.id = $1 FOR UPDATE OF u`,
        [identity.userId],
      ),
      (row) => ({
        kind: text(row, 'kind'),
        status: text(row, 'status'),
        ownerCreatedAt: count(row, 'created_ms'),
        identities: count(row, 'identities'),
        hadSession: bool(row, 'had_session'),
        hadMembership: bool(row, 'had_membership'),
        hadConsent: bool(row, 'had_consent'),
      }),
    );
    const pristine =
      owner !== null &&
      isPristineProvisionalUser({ ...owner, identityCreatedAt: identity.createdAt }, input.intentCreatedAt);
    if (!pristine) return 'in_use';
    await m.query('UPDATE identities SET user_id = $1 WHERE id = $2', [input.userId, input.identityId]);
    await m.query(`UPDATE users SET status = 'deactivated', deactivated_at = clock_timestamp() WHERE id = $1`, [
      identity.userId,
    ]);
    await m.query(`UPDATE users SET kind = 'regular' WHERE id = $1`, [input.userId]);
    return 'moved';
  }

  /**
   * Removes one identity of an active full account (contract 14), never its last that can sign in:
   * an identity of a provider the tenant removed (or of a chat platform it no longer has) is the
   * player's to remove but keeps nobody's account reachable (`canSignIn`). The user's row is locked
   * first, then its identities, so concurrent removals of its last two identities leave one; then
   * the provider rows the decision rests on are held (FOR KEY SHARE) until the commit, so a
   * `provider remove` meanwhile waits instead of taking away the credential that was counted.
   */
  async unlinkIdentity(
    m: EntityManager,
    input: { tenantId: string; userId: string; provider: string; providerSubject: string },
  ): Promise<'unlinked' | 'not_found' | 'last_identity'> {
    const user = rowsOf(
      await m.query(
        `SELECT id FROM users WHERE id = $1 AND tenant_id = $2 AND kind = 'regular' AND status = 'active' FOR UPDATE`,
        [input.userId, input.tenantId],
      ),
    );
    if (user.length !== 1) return 'not_found';
    const identities = decodeRows(
      await m.query(
        `SELECT id, provider, provider_subject, metadata->>'issuer' AS issuer FROM identities
          WHERE user_id = $1 AND status = 'active' FOR UPDATE`,
        [input.userId],
      ),
      (row) => ({
        id: text(row, 'id'),
        provider: text(row, 'provider'),
        providerSubject: text(row, 'provider_subject'),
        issuer: nullableText(row, 'issuer'),
      }),
    );
    const target = identities.find((i) => i.provider === input.provider && i.providerSubject === input.providerSubject);
    if (!target) return 'not_found';
    const remaining = identities.filter((i) => i !== target);
    if (!(await this.anyCanSignIn(m, input.tenantId, remaining))) return 'last_identity';
    await m.query('DELETE FROM identities WHERE id = $1', [target.id]);
    return 'unlinked';
  }

  /** Whether one of these identities of the tenant's user can still sign in (`canSignIn`). */
  private async anyCanSignIn(
    m: EntityManager,
    tenantId: string,
    identities: readonly HeldIdentity[],
  ): Promise<boolean> {
    if (identities.length === 0) return false;
    // An email identity always can: no read of the tenant's providers is needed.
    if (identities.some((i) => i.provider === 'email')) return true;
    const providers = decodeRows(
      await m.query(
        `SELECT id, issuer FROM identity_providers WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR KEY SHARE`,
        [tenantId, identities.map((i) => i.provider)],
      ),
      (row): [string, string] => [text(row, 'id'), text(row, 'issuer')],
    );
    const chatApp = identities.some((i) => i.provider === 'chat_platform')
      ? rowsOf(await m.query('SELECT 1 FROM chat_platform_apps WHERE tenant_id = $1 FOR KEY SHARE', [tenantId]))
      : [];
    const tenant = { providers: new Map(providers), chatPlatform: chatApp.length > 0 };
    return identities.some((i) => canSignIn(i, tenant));
  }
}
