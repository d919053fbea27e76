import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { PreparedStatement } from '../platform/database/prepared-statement';
import {
  affectedRows,
  decodeFirst,
  decodeRows,
  jsonRows,
  nullableText,
  nullableTimestamp,
  oneOf,
  rowsOf,
  text,
  timestamp,
  type Row,
} from '../platform/database/row-decoders';
import { AuditTrail, type AuditRecord } from './audit-trail.repository';
import { notePendingRevocation } from './pending-revocations.repository';

/** A user with its identities and memberships, as operators, the console and the user see it. */
export interface UserDetails {
  readonly id: string;
  readonly tenantId: string;
  readonly kind: string;
  readonly status: string;
  readonly createdAt: Date;
  readonly deactivatedAt: Date | null;
  readonly identities: ReadonlyArray<{ provider: string; providerSubject: string; email: string | null }>;
  readonly memberships: ReadonlyArray<{ tenantId: string; role: string }>;
}

/** The part of a user a player's own account shows (contract 13). */
export type PlayerAccount = Pick<UserDetails, 'id' | 'kind' | 'createdAt' | 'identities'>;

export interface SessionRow {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/**
 * Who asked for an erasure: an operator (`user delete`, contract 12), the user (contract 13), or a
 * member of the tenant in the console (contract 15).
 */
export type ErasedBy = 'admin' | 'self' | 'console';
const ERASED_BY: readonly ErasedBy[] = ['admin', 'self', 'console'];

/** A user's identities as one JSON array, oldest first. */
const IDENTITIES_OF_U = `(SELECT coalesce(json_agg(json_build_object('provider', i.provider, 'provider_subject', i.provider_subject, 'email', i.email) ORDER BY i.created_at), '[]')
            FROM identities i WHERE i.user_id = u.id)`;

/** A user with its identities and memberships (find): the admin CLI and the console. */
const FIND_USER = new PreparedStatement(
  'find-user',
  `SELECT u.id, u.tenant_id, u.kind, u.status, u.created_at, u.deactivated_at, ${IDENTITIES_OF_U} AS identities,
         (SELECT coalesce(json_agg(json_build_object('tenant_id', ms.tenant_id, 'role', ms.role) ORDER BY ms.tenant_id), '[]')
            FROM memberships ms WHERE ms.user_id = u.id) AS memberships
    FROM users u WHERE u.id = $1 AND u.tenant_id = $2`,
);

/**
 * A player's own account (findAccount): `GET /t/{t}/me` runs it on every call, so it reads only
 * what the answer shows. Without the memberships sub-select, PostgreSQL ran it 10–24 % faster
 * (pgbench, 8 clients, prepared).
 */
const FIND_ACCOUNT = new PreparedStatement(
  'find-account',
  `SELECT u.id, u.kind, u.created_at, ${IDENTITIES_OF_U} AS identities
    FROM users u WHERE u.id = $1 AND u.tenant_id = $2`,
);

/**
 * Reads and writes of one whole user: look-up, deactivation, erasure. Used by the admin CLI
 * (contract 12) and by a player's own account endpoints (contract 13); the service's sign-in paths
 * keep using the identity and session repositories.
 */
@Injectable()
export class UserRecordsRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditTrail,
  ) {}

  async findByIdentity(tenantId: string, provider: string, providerSubject: string): Promise<UserDetails | null> {
    const userId = decodeFirst(
      await this.db.query(
        'SELECT user_id FROM identities WHERE tenant_id = $1 AND provider = $2 AND provider_subject = $3',
        [tenantId, provider, providerSubject],
      ),
      (row) => text(row, 'user_id'),
    );
    return userId === null ? null : this.find(tenantId, userId);
  }

  /**
   * The user with its identities and memberships in one statement: `GET /t/{t}/me` reads it on
   * every call, and three sequential round trips were most of that route's cost (issue 24, point 6).
   */
  async find(tenantId: string, userId: string, m: EntityManager = this.db.manager): Promise<UserDetails | null> {
    const [row] = rowsOf(await FIND_USER.run(m, [userId, tenantId]));
    if (!row) return null;
    return {
      id: text(row, 'id'),
      tenantId: text(row, 'tenant_id'),
      kind: text(row, 'kind'),
      status: text(row, 'status'),
      createdAt: timestamp(row, 'created_at'),
      deactivatedAt: nullableTimestamp(row, 'deactivated_at'),
      identities: identitiesOf(row),
      memberships: jsonRows(row, 'memberships').map((ms) => ({
        tenantId: text(ms, 'tenant_id'),
        role: text(ms, 'role'),
      })),
    };
  }

  /** A player's own account: what `GET /t/{t}/me` shows of the user, and nothing else. */
  async findAccount(tenantId: string, userId: string): Promise<PlayerAccount | null> {
    const [row] = rowsOf(await FIND_ACCOUNT.run(this.db, [userId, tenantId]));
    if (!row) return null;
    return {
      id: text(row, 'id'),
      kind: text(row, 'kind'),
      createdAt: timestamp(row, 'created_at'),
      identities: identitiesOf(row),
    };
  }

  /** Session rows that may still be live (their expiry has not passed), newest first. */
  async unexpiredSessions(userId: string): Promise<SessionRow[]> {
    return decodeRows(
      await this.db.query(
        'SELECT id, client_id, created_at, expires_at FROM sessions WHERE user_id = $1 AND expires_at > now() ORDER BY created_at DESC',
        [userId],
      ),
      (r) => ({
        id: text(r, 'id'),
        clientId: text(r, 'client_id'),
        createdAt: timestamp(r, 'created_at'),
        expiresAt: timestamp(r, 'expires_at'),
      }),
    );
  }

  async sessionOwner(sessionId: string): Promise<{ tenantId: string; userId: string } | null> {
    return decodeFirst(
      await this.db.query('SELECT tenant_id, user_id FROM sessions WHERE id = $1', [sessionId]),
      (row) => ({
        tenantId: text(row, 'tenant_id'),
        userId: text(row, 'user_id'),
      }),
    );
  }

  /**
   * Marks the user deactivated, and its sessions' rows revoked, and records it; `changed` is false
   * when it was not active. `alsoRecord` (the admin command's own row) is written in the same
   * transaction whether or not the status changed: the caller revokes the sessions afterwards, so
   * the rows exist before that effect (issue 22). So does the note of that revocation
   * (`pendingRevocation`), which the caller settles once Redis has revoked, and the running
   * service retries if it never does.
   */
  async deactivate(
    tenantId: string,
    userId: string,
    by: string,
    alsoRecord: readonly AuditRecord[] = [],
  ): Promise<{ changed: boolean; pendingRevocation: string | null }> {
    return this.db.transaction(async (m) => {
      // TypeORM answers an UPDATE with [rows, affected count].
      const { affected: updated } = affectedRows(
        await m.query(
          `UPDATE users SET status = 'deactivated', deactivated_at = clock_timestamp()
          WHERE id = $1 AND tenant_id = $2 AND status = 'active'`,
          [userId, tenantId],
        ),
      );
      // The sessions' rows end with the user, before Redis revokes the live sessions: should that
      // revocation be lost (refused, or a Redis that comes back without its last writes), a
      // customer refresh still finds its row ended, and purge counts the sessions as ended.
      await m.query(
        `UPDATE sessions SET revoked_at = clock_timestamp() WHERE user_id = $1 AND tenant_id = $2 AND revoked_at IS NULL`,
        [userId, tenantId],
      );
      const deactivated: AuditRecord[] =
        updated > 0 ? [{ type: 'user.deactivated', tenantId, subject: userId, data: { by } }] : [];
      await this.audit.record([...deactivated, ...alsoRecord], m);
      return { changed: updated > 0, pendingRevocation: await notePendingRevocation(m, tenantId, userId) };
    });
  }

  /**
   * Records that every session of a customer user is being revoked for its erasure, in the same
   * statement that checks the user is one; false (nothing written) when it is not. Written before
   * the Redis revocation, which cannot share a PostgreSQL transaction (issue 22, point 6): if the
   * erasure then fails, the revocation that may have happened still has its row. Ids only.
   */
  async recordErasureRevocation(tenantId: string, userId: string, by: ErasedBy): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data)
       SELECT 'session.revoked', u.tenant_id, u.id, $3::jsonb FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.id = $1 AND u.tenant_id = $2 AND t.kind = 'customer'
       RETURNING id`,
        [userId, tenantId, JSON.stringify({ sessions: 'all', by, for: 'user.delete' })],
      ),
    );
    return rows.length === 1;
  }

  /**
   * Erasures whose revocation row (`recordErasureRevocation`) is older than `graceMinutes` (and at
   * most `lookbackDays`) while the user is still there: PostgreSQL failed after Redis revoked the
   * sessions, and the player, whose tokens are dead, cannot ask again. A user with a session made or
   * used after that row played on (the revocation never reached Redis, the answer was 503) and is
   * not listed: that erasure is for the player to ask again.
   */
  async interruptedErasures(
    graceMinutes: number,
    lookbackDays: number,
  ): Promise<Array<{ tenantId: string; userId: string; by: ErasedBy }>> {
    return decodeRows(
      await this.db.query(
        `SELECT DISTINCT ON (u.id) u.tenant_id, u.id, a.data->>'by' AS by
           FROM audit_events a JOIN users u ON u.id = a.subject AND u.tenant_id = a.tenant_id
          WHERE a.created_at > now() - make_interval(days => $2)
            AND a.created_at < now() - make_interval(mins => $1)
            AND a.type = 'session.revoked' AND a.data->>'for' = 'user.delete'
            AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id
                              AND greatest(s.created_at, s.last_used_at) > a.created_at)
          ORDER BY u.id, a.created_at DESC`,
        [graceMinutes, lookbackDays],
      ),
      (row) => ({ tenantId: text(row, 'tenant_id'), userId: text(row, 'id'), by: oneOf(row, 'by', ERASED_BY) }),
    );
  }

  /**
   * Erasure of a customer user (contract 12): identities, consents, session rows and the user row
   * go in one transaction; audit rows keep only ids, and any row that still names one of the
   * user's addresses or provider subjects loses its data. `user.deleted` records who asked
   * (contract 13: `by` is `self` or `admin`). Returns the session ids it removed, or null when the
   * user is not there (any more: of concurrent erasures, the row lock lets exactly one find it).
   * Callers go through UserErasure, which revokes the sessions in Redis first. `alsoRecord` (the
   * admin command's own row) is written in the same transaction as the erasure.
   */
  async erase(
    tenantId: string,
    userId: string,
    by: ErasedBy,
    alsoRecord: readonly AuditRecord[] = [],
  ): Promise<string[] | null> {
    return this.db.transaction(async (m) => {
      const locked = rowsOf(
        await m.query('SELECT id FROM users WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [userId, tenantId]),
      );
      if (locked.length === 0) return null;
      const personal = decodeRows(
        await m.query(
          `SELECT provider_subject AS value FROM identities WHERE user_id = $1
           UNION SELECT email FROM identities WHERE user_id = $1 AND email IS NOT NULL`,
          [userId],
        ),
        (row) => ({ value: text(row, 'value') }),
      );
      const sessions = decodeRows(await m.query('SELECT id FROM sessions WHERE user_id = $1', [userId]), (row) => ({
        id: text(row, 'id'),
      }));
      await m.query('DELETE FROM consents WHERE user_id = $1', [userId]);
      await m.query('DELETE FROM memberships WHERE user_id = $1', [userId]);
      await m.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
      await m.query('DELETE FROM identities WHERE user_id = $1', [userId]);
      await m.query('DELETE FROM users WHERE id = $1', [userId]);
      // In any case: a provider may have given the address in another case than a row keeps.
      for (const value of personal.map((p) => p.value.toLowerCase())) await m.query(...redaction(tenantId, value));
      await this.audit.record([{ type: 'user.deleted', tenantId, subject: userId, data: { by } }, ...alsoRecord], m);
      return sessions.map((s) => s.id);
    });
  }
}

/**
 * The statement that redacts the tenant's audit rows naming one of an erased user's values (an
 * address or a provider subject, lower-cased): a row is redacted only where the value is a whole
 * string value of it, at any depth, in any case. As a substring of the row's text a value matched
 * far more than itself: subjects of OpenID Connect issuers are often short numbers ("1"), which
 * matched nearly every row of the tenant, and an address matched every longer one containing it
 * (erasing `a@b.co` wiped the rows of `xa@b.com` and `a@b.co.uk`), so the erasure of one player
 * wiped other players' and members' rows.
 */
function redaction(tenantId: string, value: string): [string, unknown[]] {
  return [
    `UPDATE audit_events SET data = '{"redacted": true}'::jsonb WHERE tenant_id = $1
        AND EXISTS (SELECT 1 FROM jsonb_path_query(data, 'strict $.**') AS v(item)
                     WHERE jsonb_typeof(v.item) = 'string' AND lower(v.item #>> '{}') = $2)`,
    [tenantId, value],
  ];
}

function identitiesOf(row: Row): UserDetails['identities'] {
  return jsonRows(row, 'identities').map((i) => ({
    provider: text(i, 'provider'),
    providerSubject: text(i, 'provider_subject'),
    email: nullableText(i, 'email'),
  }));
}
