import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

export type AuditData = Record<string, string | number | boolean | null>;

/** One audit row. `subject` and `data` hold ids and facts, never a secret or an address. */
export interface AuditRecord {
  readonly type: string;
  readonly tenantId: string;
  readonly subject: string;
  readonly data?: AuditData;
}

/** One audit row, inside the transaction of `m`: for repositories that write a change with its row. */
export async function insertAuditRecord(m: EntityManager, event: AuditRecord): Promise<void> {
  // Plain SQL: TypeORM's insert builder walked the entity metadata on every sign-in and upgrade.
  await m.query('INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ($1, $2, $3, $4)', [
    event.type,
    event.tenantId,
    event.subject,
    JSON.stringify(event.data ?? {}),
  ]);
}

/** The audit trail (contract 7, 12): one insert per event, inside the caller's transaction if any. */
@Injectable()
export class AuditTrail {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async record(event: AuditRecord, m: EntityManager = this.db.manager): Promise<void> {
    await insertAuditRecord(m, event);
  }
}
