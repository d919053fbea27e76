import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { canonicalEmail } from './email-address';
import { nullableTimestamp, text, timestamp, type Row } from './row-decoders';

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
 * an exact email address only, never by a pattern: the address goes through the unique index of
 * email identities (tenant, provider, subject) in its canonical form, so a look-up reads one
 * index entry and no query ever scans or compares addresses.
 */
@Injectable()
export class PlayerLookupRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The id of the player of the tenant whose email identity is exactly this address, if any. */
  async userIdByEmail(tenantId: string, email: string): Promise<string | null> {
    const [row] = await this.db.query<Row[]>(
      `SELECT user_id FROM identities WHERE tenant_id = $1 AND provider = 'email' AND provider_subject = $2`,
      [tenantId, canonicalEmail(email)],
    );
    return row ? text(row, 'user_id') : null;
  }

  /** The session rows of a player that have neither ended nor been revoked, newest first. */
  async openSessions(tenantId: string, userId: string): Promise<PlayerSessionRow[]> {
    const rows = await this.db.query<Row[]>(
      `SELECT id, client_id, created_at, last_used_at FROM sessions
        WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > clock_timestamp()
        ORDER BY created_at DESC, id`,
      [tenantId, userId],
    );
    return rows.map(toSession);
  }
}
