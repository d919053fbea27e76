import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { IdentityEntity, type IdentityProvider } from '../platform/database/entities/identity.entity';
import { IdentityEmailDigest } from './identity-email-digest';
import { newRecordId } from './identifiers';
import type { UserKind, UserRecord, UserStatus } from './records';

export interface ResolvedIdentity {
  readonly user: UserRecord;
  readonly identity: IdentityEntity;
  readonly created: boolean;
}

export interface IdentityClaim {
  readonly tenantId: string;
  readonly provider: IdentityProvider;
  readonly providerSubject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly metadata: Record<string, string | null>;
}

interface UserRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly kind: UserKind;
  readonly status: UserStatus;
  readonly created_at: Date;
  readonly deactivated_at: Date | null;
}

interface IdentityRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly provider: IdentityProvider;
  readonly provider_subject: string;
  readonly email: string | null;
  readonly email_verified: boolean;
  readonly status: IdentityEntity['status'];
  readonly metadata: Record<string, string | null>;
  readonly created_at: Date;
}

const USER_COLUMNS = 'id, tenant_id, kind, status, created_at, deactivated_at';
const IDENTITY_COLUMNS =
  'id, tenant_id, user_id, provider, provider_subject, email, email_verified, status, metadata, created_at';
/** The user's columns prefixed `u_`, beside an identity's, for one joined row. */
const JOINED_USER_COLUMNS = USER_COLUMNS.split(', ')
  .map((c) => `u.${c} AS u_${c}`)
  .join(', ');

const toUser = (r: UserRow): UserRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  kind: r.kind,
  status: r.status,
  createdAt: r.created_at,
  deactivatedAt: r.deactivated_at,
});

const toIdentity = (r: IdentityRow): IdentityEntity => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  provider: r.provider,
  providerSubject: r.provider_subject,
  email: r.email,
  emailVerified: r.email_verified,
  status: r.status,
  metadata: r.metadata,
  createdAt: r.created_at,
});

/** A joined row's user half (its `u_` columns). */
function userOf(row: Record<string, unknown>): UserRecord {
  const user = Object.fromEntries(USER_COLUMNS.split(', ').map((c) => [c, row[`u_${c}`]]));
  return toUser(user as unknown as UserRow);
}

/**
 * Users and their identities: the one place that creates or resolves either. Plain parameterised
 * SQL: these reads and the creation sit on every console sign-in and token exchange, where
 * TypeORM's query builder cost more CPU than the queries.
 */
@Injectable()
export class IdentitiesRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly emailDigest: IdentityEmailDigest,
  ) {}

  async findIdentity(
    tenantId: string,
    provider: IdentityProvider,
    providerSubject: string,
    m: EntityManager = this.db.manager,
  ): Promise<IdentityEntity | null> {
    const [row] = await m.query<IdentityRow[]>(
      `SELECT ${IDENTITY_COLUMNS} FROM identities WHERE tenant_id = $1 AND provider = $2 AND provider_subject = $3`,
      [tenantId, provider, providerSubject],
    );
    return row ? toIdentity(row) : null;
  }

  async findUser(id: string, m: EntityManager = this.db.manager): Promise<UserRecord | null> {
    const [row] = await m.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return row ? toUser(row) : null;
  }

  /**
   * Resolves the identity's owner, creating a user of `newUserKind` with the identity when the
   * credential is new, in one statement (atomic on its own). Concurrent first sign-ins race on the
   * unique (tenant, provider, subject) constraint; the loser re-reads the winner's row.
   */
  async resolveOrCreate(claim: IdentityClaim, newUserKind: UserKind): Promise<ResolvedIdentity> {
    const existing = await this.findWithUser(claim);
    if (existing) return { ...existing, created: false };
    try {
      const [row] = await this.db.query<Array<Record<string, unknown>>>(
        `WITH u AS (
           INSERT INTO users (id, tenant_id, kind, status) VALUES ($1, $2, $3, 'active') RETURNING ${USER_COLUMNS}
         ), i AS (
           INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject, email, email_verified, status, metadata, email_digest)
           SELECT $4, $2, u.id, $5, $6, $7, $8::boolean, 'active', $9::jsonb, $10 FROM u RETURNING ${IDENTITY_COLUMNS}
         )
         SELECT i.*, ${JOINED_USER_COLUMNS} FROM i JOIN u ON u.id = i.user_id`,
        [
          newRecordId('user'),
          claim.tenantId,
          newUserKind,
          newRecordId('identity'),
          claim.provider,
          claim.providerSubject,
          claim.email,
          claim.emailVerified,
          JSON.stringify(claim.metadata),
          this.emailDigest.of(claim),
        ],
      );
      if (!row) throw new Error('identity creation returned no row');
      return { user: userOf(row), identity: toIdentity(row as unknown as IdentityRow), created: true };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const winner = await this.findWithUser(claim);
      if (!winner) throw err;
      return { ...winner, created: false };
    }
  }

  /** The identity and its owner in one joined read. */
  private async findWithUser(claim: IdentityClaim): Promise<{ user: UserRecord; identity: IdentityEntity } | null> {
    const [row] = await this.db.query<Array<Record<string, unknown>>>(
      `SELECT ${IDENTITY_COLUMNS.split(', ')
        .map((c) => `i.${c}`)
        .join(', ')}, ${JOINED_USER_COLUMNS}
         FROM identities i JOIN users u ON u.id = i.user_id
        WHERE i.tenant_id = $1 AND i.provider = $2 AND i.provider_subject = $3`,
      [claim.tenantId, claim.provider, claim.providerSubject],
    );
    return row ? { user: userOf(row), identity: toIdentity(row as unknown as IdentityRow) } : null;
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';
}
