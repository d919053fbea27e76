import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdentityEmailDigest } from './identity-email-digest';
import { decodeRows, nullableTimestamp, text, timestamp, type Row } from '../platform/database/row-decoders';

/** A session row of a player, as the console lists it (contract 15). */
export interface PlayerSessionRow {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

const toSession = (row: Row): PlayerSessionRow => ({
  id: text(row, 'id'),
  clientId: text(row, 'client_id'),
  createdAt: timestamp(row, 'created_at'),
  lastUsedAt: nullableTimestamp(row, 'last_used_at'),
});

/**
 * The console's look-ups of a tenant's players (contract 15). A player is found by an exact id or
 * an exact email address only, never by a pattern. An address is looked up by its keyed digest
 * (issue 26) on the (tenant, email_digest) index: the plain address columns are never read or
 * compared, and the address itself never reaches the database.
 */
@Injectable()
export class PlayerLookupRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly emailDigest: IdentityEmailDigest,
  ) {}

  /**
   * The players of the tenant with an identity of exactly this address: an email identity, or a
   * provider's with this verified email. The digest under every PRIVACY_KEY is asked for, so rows
   * digested before a rotation are found until `identity redigest` moves them to the new key.
   */
  async userIdsByEmail(tenantId: string, email: string): Promise<string[]> {
    return decodeRows(
      await this.db.query(
        `SELECT DISTINCT user_id FROM identities WHERE tenant_id = $1 AND email_digest = ANY($2::text[]) ORDER BY user_id`,
        [tenantId, this.emailDigest.candidates(email)],
      ),
      (r) => text(r, 'user_id'),
    );
  }

  /** The session rows of a player that have neither ended nor been revoked, newest first. */
  async openSessions(tenantId: string, userId: string): Promise<PlayerSessionRow[]> {
    return decodeRows(
      await this.db.query(
        `SELECT id, client_id, created_at, last_used_at FROM sessions
          WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > clock_timestamp()
          ORDER BY created_at DESC, id`,
        [tenantId, userId],
      ),
      toSession,
    );
  }
}
