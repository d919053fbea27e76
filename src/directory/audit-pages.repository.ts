import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { jsonObject, rowsOf, text, timestamp } from '../platform/database/row-decoders';

export interface AuditEventView {
  /** The row's id (a bigint, as a string of digits). */
  readonly id: string;
  readonly type: string;
  readonly subject: string;
  readonly createdAt: Date;
  readonly data: Record<string, unknown>;
}

/**
 * A tenant's audit trail, newest first, a page at a time (contract 15). Pages are keyed by id
 * (`before`: only rows older than that one), so rows written meanwhile never shift a page. Rows
 * hold ids and facts only; an erased player's addresses were redacted by the erasure.
 */
@Injectable()
export class AuditPagesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async page(
    tenantId: string,
    filter: { readonly type?: string; readonly before?: string },
    size: number,
  ): Promise<AuditEventView[]> {
    // Ordered by the bigint column, not the text the answer carries (which would sort "9" first).
    const rows = rowsOf(
      await this.db.query(
        `SELECT id::text AS id, type, subject, created_at, data FROM audit_events
        WHERE tenant_id = $1 AND ($2::text IS NULL OR type = $2) AND ($3::bigint IS NULL OR id < $3::bigint)
        ORDER BY audit_events.id DESC LIMIT $4`,
        [tenantId, filter.type ?? null, filter.before ?? null, size],
      ),
    );
    return rows.map((r) => ({
      id: text(r, 'id'),
      type: text(r, 'type'),
      subject: text(r, 'subject'),
      createdAt: timestamp(r, 'created_at'),
      data: jsonObject(r, 'data'),
    }));
  }
}
