import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { SessionRecordEntity } from '../platform/database/entities/session-record.entity';

@Injectable()
export class SessionRecordsRepository {
  constructor(@InjectRepository(SessionRecordEntity) private readonly records: Repository<SessionRecordEntity>) {}

  /**
   * The row lives as long as the session can (its TTL), so `purge` knows when it is history.
   * Plain SQL: this insert sits on every token exchange and sign-in, where TypeORM's insert
   * builder cost more CPU than the statement.
   */
  async record(
    session: Omit<SessionRecordEntity, 'createdAt' | 'revokedAt' | 'expiresAt'>,
    ttlSeconds: number,
    m: EntityManager = this.records.manager,
  ): Promise<void> {
    await m.query(`INSERT INTO sessions (id, tenant_id, user_id, client_id, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
      session.id,
      session.tenantId,
      session.userId,
      session.clientId,
      new Date(Date.now() + ttlSeconds * 1000),
    ]);
  }

  /**
   * Marks the user's session revoked inside the caller's transaction, locking the row; false when
   * it is unknown, another user's, or already revoked.
   */
  async revokeWithin(m: EntityManager, sessionId: string, userId: string): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected count].
    const [, affected] = await m.query<[unknown[], number]>(
      `UPDATE sessions SET revoked_at = clock_timestamp() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL`,
      [sessionId, userId],
    );
    return affected === 1;
  }

  /** Whether a revocation of the session has committed here. */
  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.records.countBy({ id: sessionId, revokedAt: Not(IsNull()) })) === 1;
  }
}
