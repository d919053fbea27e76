import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditEventEntity } from '../platform/database/entities/audit-event.entity';

export type AuditData = Record<string, string | number | boolean | null>;

/** One audit row. `subject` and `data` hold ids and facts, never a secret or an address. */
export interface AuditRecord {
  readonly type: string;
  readonly tenantId: string;
  readonly subject: string;
  readonly data?: AuditData;
}

/** The audit trail (contract 7, 12): one insert per event, inside the caller's transaction if any. */
@Injectable()
export class AuditTrail {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async record(event: AuditRecord, m: EntityManager = this.db.manager): Promise<void> {
    await m.insert(AuditEventEntity, {
      type: event.type,
      tenantId: event.tenantId,
      subject: event.subject,
      data: event.data ?? {},
    });
  }
}
