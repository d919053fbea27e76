import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ClientEntity } from '../platform/database/entities/client.entity';
import { insertAuditRecords, type AuditRecord } from './audit-trail.repository';
import { CLIENT_TYPES, type ClientRecord } from './records';
import { PreparedStatement } from '../platform/database/prepared-statement';
import { bool, nullableText, oneOf, rowsOf, text, texts, timestamp, type Row } from '../platform/database/row-decoders';

/** A client row to write; web origins default to none. */
export type NewClient = Omit<ClientRecord, 'createdAt' | 'webOrigins'> & { readonly webOrigins?: readonly string[] };

/** A client row read afresh (findEnabledOfActiveTenant): on every customer refresh. */
const ENABLED_CLIENT_OF_ACTIVE_TENANT = new PreparedStatement(
  'enabled-client-of-active-tenant',
  `SELECT c.id, c.tenant_id, c.name, c.type, c.enabled, c.scopes, c.redirect_uris, c.web_origins, c.secret_digest, c.created_at
     FROM tenants t LEFT JOIN clients c ON c.tenant_id = t.id AND c.id = $2 AND c.enabled
    WHERE t.id = $1 AND t.status = 'active' AND t.kind = 'customer'`,
);

@Injectable()
export class ClientsRepository {
  constructor(@InjectRepository(ClientEntity) private readonly clients: Repository<ClientEntity>) {}

  find(id: string): Promise<ClientRecord | null> {
    return this.clients.findOneBy({ id });
  }

  /**
   * One round trip for the guest hot path: whether the tenant is an active customer tenant, and
   * its enabled client of that id if there is one.
   */
  async findEnabledOfActiveTenant(
    tenantId: string,
    id: string,
  ): Promise<{ tenantActive: boolean; client: ClientRecord | null }> {
    const [row] = rowsOf(await ENABLED_CLIENT_OF_ACTIVE_TENANT.run(this.clients.manager, [tenantId, id]));
    if (!row) return { tenantActive: false, client: null };
    if (row.id === null) return { tenantActive: true, client: null };
    // A plain object rather than the repository's create(), which walks the entity metadata.
    return { tenantActive: true, client: clientOf(row) };
  }

  /**
   * The enabled browser clients of an active customer tenant, with what decides their web origins
   * (contract section 11); null when the tenant is not an active customer tenant.
   */
  async browserClientsOfActiveTenant(
    tenantId: string,
  ): Promise<Array<Pick<ClientRecord, 'id' | 'type' | 'redirectUris' | 'webOrigins'>> | null> {
    const rows = rowsOf(
      await this.clients.query(
        `SELECT c.id, c.redirect_uris, c.web_origins
           FROM tenants t LEFT JOIN clients c ON c.tenant_id = t.id AND c.enabled AND c.type = 'browser'
          WHERE t.id = $1 AND t.status = 'active' AND t.kind = 'customer'`,
        [tenantId],
      ),
    );
    if (rows.length === 0) return null;
    return rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: text(row, 'id'),
        type: 'browser' as const,
        redirectUris: texts(row, 'redirect_uris'),
        webOrigins: texts(row, 'web_origins'),
      }));
  }

  listOf(tenantId: string): Promise<ClientRecord[]> {
    return this.clients.find({ where: { tenantId }, order: { name: 'ASC', id: 'ASC' } });
  }

  async insert(client: NewClient): Promise<void> {
    await this.clients.insert(clientRow(client));
  }

  async upsert(client: NewClient): Promise<void> {
    await this.clients.upsert(clientRow(client), ['id']);
  }

  /** Inserts the client with its audit rows, in one transaction (issue 22: no change without its row). */
  async insertRecorded(client: NewClient, records: readonly AuditRecord[]): Promise<void> {
    await this.clients.manager.transaction(async (m) => {
      await m.insert(ClientEntity, clientRow(client));
      await insertAuditRecords(m, records);
    });
  }

  /**
   * Changes a client of the tenant under a row lock, so concurrent changes of different fields
   * never undo each other: `change` sees the row as it is now and returns the new settings and the
   * audit rows, which commit with them; it may throw to refuse (nothing is written). Null when the
   * tenant has no such client.
   */
  async updateRecorded(
    tenantId: string,
    id: string,
    change: (current: ClientRecord) => { next: ClientRecord; records: readonly AuditRecord[] },
  ): Promise<ClientRecord | null> {
    return this.clients.manager.transaction(async (m) => {
      const current = await m.findOne(ClientEntity, { where: { id, tenantId }, lock: { mode: 'pessimistic_write' } });
      if (!current) return null;
      const { next, records } = change(current);
      await m.update(
        ClientEntity,
        { id, tenantId },
        {
          name: next.name,
          enabled: next.enabled,
          scopes: [...next.scopes],
          redirectUris: [...next.redirectUris],
          webOrigins: [...next.webOrigins],
        },
      );
      await insertAuditRecords(m, records);
      return next;
    });
  }

  async disable(tenantId: string, id: string): Promise<boolean> {
    const result = await this.clients.update({ id, tenantId }, { enabled: false });
    return (result.affected ?? 0) > 0;
  }
}

/** The entity's columns of a new client: TypeORM takes mutable arrays. */
function clientRow(client: NewClient): Omit<ClientEntity, 'createdAt'> {
  return {
    ...client,
    scopes: [...client.scopes],
    redirectUris: [...client.redirectUris],
    webOrigins: [...(client.webOrigins ?? [])],
  };
}

const clientOf = (row: Row): ClientRecord => ({
  id: text(row, 'id'),
  tenantId: text(row, 'tenant_id'),
  name: text(row, 'name'),
  type: oneOf(row, 'type', CLIENT_TYPES),
  enabled: bool(row, 'enabled'),
  scopes: texts(row, 'scopes'),
  redirectUris: texts(row, 'redirect_uris'),
  webOrigins: texts(row, 'web_origins'),
  secretDigest: nullableText(row, 'secret_digest'),
  createdAt: timestamp(row, 'created_at'),
});
