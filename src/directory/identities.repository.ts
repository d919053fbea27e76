import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { IdentityEntity, type IdentityProvider } from '../platform/database/entities/identity.entity';

import { IdentityEmailDigest } from './identity-email-digest';
import { newRecordId } from './identifiers';
import { USER_KINDS, USER_STATUSES, type IdentityClaim, type UserKind, type UserRecord } from './records';
import {
  bool,
  decodeFirst,
  jsonTextMap,
  nullableText,
  nullableTimestamp,
  oneOf,
  text,
  timestamp,
  type Row,
} from '../platform/database/row-decoders';

export interface ResolvedIdentity {
  readonly user: UserRecord;
  readonly identity: IdentityEntity;
  readonly created: boolean;
}

const USER_COLUMNS = 'id, tenant_id, kind, status, created_at, deactivated_at';
const IDENTITY_COLUMNS =
  'id, tenant_id, user_id, provider, provider_subject, email, email_verified, status, metadata, created_at';
/** The user's columns prefixed `u_`, beside an identity's, for one joined row. */
const JOINED_USER_COLUMNS = USER_COLUMNS.split(', ')
  .map((c) => `u.${c} AS u_${c}`)
  .join(', ');

const IDENTITY_STATUSES: readonly IdentityEntity['status'][] = ['active', 'inactive'];

/** A user's row, or a joined row's user half (its columns prefixed `u_`). */
const userOf = (row: Row, prefix = ''): UserRecord => ({
  id: text(row, `${prefix}id`),
  tenantId: text(row, `${prefix}tenant_id`),
  kind: oneOf(row, `${prefix}kind`, USER_KINDS),
  status: oneOf(row, `${prefix}status`, USER_STATUSES),
  createdAt: timestamp(row, `${prefix}created_at`),
  deactivatedAt: nullableTimestamp(row, `${prefix}deactivated_at`),
});

const identityOf = (row: Row): IdentityEntity => ({
  id: text(row, 'id'),
  tenantId: text(row, 'tenant_id'),
  userId: text(row, 'user_id'),
  provider: text(row, 'provider'),
  providerSubject: text(row, 'provider_subject'),
  email: nullableText(row, 'email'),
  emailVerified: bool(row, 'email_verified'),
  status: oneOf(row, 'status', IDENTITY_STATUSES),
  metadata: jsonTextMap(row, 'metadata'),
  createdAt: timestamp(row, 'created_at'),
});

const withUser = (row: Row): { user: UserRecord; identity: IdentityEntity } => ({
  user: userOf(row, 'u_'),
  identity: identityOf(row),
});

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
    return decodeFirst(
      await m.query(
        `SELECT ${IDENTITY_COLUMNS} FROM identities WHERE tenant_id = $1 AND provider = $2 AND provider_subject = $3`,
        [tenantId, provider, providerSubject],
      ),
      identityOf,
    );
  }

  async findUser(id: string, m: EntityManager = this.db.manager): Promise<UserRecord | null> {
    return decodeFirst(await m.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]), (row) => userOf(row));
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
      const created = decodeFirst(
        await this.db.query(
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
        ),
        withUser,
      );
      if (!created) throw new Error('identity creation returned no row');
      return { ...created, created: true };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const winner = await this.findWithUser(claim);
      if (!winner) throw err;
      return { ...winner, created: false };
    }
  }

  /**
   * Records the address the identity's provider verified at this sign-in when it differs from the
   * one the row keeps (or the row's was not verified), with its lookup digest, so the console finds
   * the player by the address the provider knows now (docs/security.md, "Provider emails"). Only a
   * verified address is ever written here, and it names this identity alone: no other identity or
   * user is looked at, so an address never joins two accounts.
   */
  async refreshVerifiedEmail(identity: IdentityEntity, email: string): Promise<void> {
    await this.db.query(
      `UPDATE identities SET email = $2, email_verified = true, email_digest = $3
        WHERE id = $1 AND (email IS DISTINCT FROM $2 OR NOT email_verified)`,
      [identity.id, email, this.emailDigest.of({ ...identity, email, emailVerified: true })],
    );
  }

  /** The identity and its owner in one joined read. */
  private async findWithUser(claim: IdentityClaim): Promise<{ user: UserRecord; identity: IdentityEntity } | null> {
    return decodeFirst(
      await this.db.query(
        `SELECT ${IDENTITY_COLUMNS.split(', ')
          .map((c) => `i.${c}`)
          .join(', ')}, ${JOINED_USER_COLUMNS}
         FROM identities i JOIN users u ON u.id = i.user_id
        WHERE i.tenant_id = $1 AND i.provider = $2 AND i.provider_subject = $3`,
        [claim.tenantId, claim.provider, claim.providerSubject],
      ),
      withUser,
    );
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';
}
