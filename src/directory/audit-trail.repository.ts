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

/**
 * Audit rows inside the transaction of `m`, in one statement: for repositories that write a change
 * with its rows. Plain SQL: TypeORM's insert builder walked the entity metadata on every sign-in
 * and upgrade.
 */
export async function insertAuditRecords(m: EntityManager, events: readonly AuditRecord[]): Promise<void> {
  if (events.length === 0) return;
  await m.query(
    `INSERT INTO audit_events (type, tenant_id, subject, data)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])`,
    [
      events.map((e) => e.type),
      events.map((e) => e.tenantId),
      events.map((e) => e.subject),
      events.map((e) => JSON.stringify(e.data ?? {})),
    ],
  );
}

/** The audit trail (contract 7, 12): one insert per call, inside the caller's transaction if any. */
@Injectable()
export class AuditTrail {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async record(events: AuditRecord | readonly AuditRecord[], m: EntityManager = this.db.manager): Promise<void> {
    await insertAuditRecords(m, 'type' in events ? [events] : events);
  }
}
