import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AppError } from '../errors/app-error';
import { MembershipEntity } from '../platform/database/entities/membership.entity';
import { insertAuditRecords, type AuditRecord } from './audit-trail.repository';
import { MEMBERSHIP_ROLES, type MembershipRecord, type MembershipRole, type TenantRecord } from './records';
import {
  bool,
  decodeFirst,
  decodeRows,
  nullableText,
  oneOf,
  rowsOf,
  text,
  timestamp,
} from '../platform/database/row-decoders';

@Injectable()
export class MembershipsRepository {
  constructor(@InjectRepository(MembershipEntity) private readonly memberships: Repository<MembershipEntity>) {}

  async upsert(tenantId: string, userId: string, role: MembershipRole): Promise<void> {
    await this.memberships.upsert({ tenantId, userId, role }, ['tenantId', 'userId']);
  }

  async remove(tenantId: string, userId: string): Promise<boolean> {
    const result = await this.memberships.delete({ tenantId, userId });
    return (result.affected ?? 0) > 0;
  }

  find(tenantId: string, userId: string): Promise<MembershipRecord | null> {
    return this.memberships.findOneBy({ tenantId, userId });
  }

  /**
   * The active user's role in an active customer tenant, with the tenant, in one round trip: every
   * management request of a tenant asks it first (tenant-membership.guard.ts). The user's own status
   * is read here too: a deactivation commits in PostgreSQL before Redis revokes the sessions, and
   * should Redis refuse that (the revocation is then retried, pending_revocations), the bearer,
   * which reads Redis, still passes; no tenant may be changed by that user meanwhile (contract 12).
   */
  async findInActiveCustomerTenant(
    tenantId: string,
    userId: string,
  ): Promise<{ tenant: TenantRecord; role: MembershipRole } | null> {
    return decodeFirst(
      await this.memberships.manager.query(
        `SELECT t.id, t.name, t.created_at, m.role
           FROM memberships m JOIN tenants t ON t.id = m.tenant_id JOIN users u ON u.id = m.user_id
          WHERE m.tenant_id = $1 AND m.user_id = $2 AND t.kind = 'customer' AND t.status = 'active'
            AND u.status = 'active'`,
        [tenantId, userId],
      ),
      (r) => ({
        tenant: {
          id: text(r, 'id'),
          name: text(r, 'name'),
          kind: 'customer',
          status: 'active',
          createdAt: timestamp(r, 'created_at'),
        },
        role: oneOf(r, 'role', MEMBERSHIP_ROLES),
      }),
    );
  }

  /** A tenant's members with their control-plane email, for operators (`membership list`). */
  async listOfTenant(tenantId: string): Promise<Array<{ userId: string; email: string | null; role: string }>> {
    return decodeRows(
      await this.memberships.manager.query(
        `SELECT m.user_id, i.email, m.role FROM memberships m
           LEFT JOIN identities i ON i.user_id = m.user_id AND i.provider = 'email'
          WHERE m.tenant_id = $1 ORDER BY i.email, m.user_id`,
        [tenantId],
      ),
      (r) => ({ userId: text(r, 'user_id'), email: nullableText(r, 'email'), role: text(r, 'role') }),
    );
  }

  /**
   * Adds a member, or changes the role of one, with its audit rows; `removeRecorded` removes one.
   * Both lock the tenant's memberships and refuse (writing nothing) a change that would leave
   * the tenant without an active owner: nobody could then change its members but an operator.
   */
  async putRecorded(
    tenantId: string,
    userId: string,
    role: MembershipRole,
    records: readonly AuditRecord[],
  ): Promise<void> {
    await this.changeRecorded(tenantId, userId, role, records);
  }

  /** False when the user is not a member of the tenant. */
  async removeRecorded(tenantId: string, userId: string, records: readonly AuditRecord[]): Promise<boolean> {
    return this.changeRecorded(tenantId, userId, null, records);
  }

  private changeRecorded(
    tenantId: string,
    userId: string,
    role: MembershipRole | null,
    records: readonly AuditRecord[],
  ): Promise<boolean> {
    return this.memberships.manager.transaction(async (m) => {
      const rows = rowsOf(
        await m.query(
          `SELECT ms.user_id, ms.role, u.status = 'active' AS active
             FROM memberships ms JOIN users u ON u.id = ms.user_id
            WHERE ms.tenant_id = $1 ORDER BY ms.user_id FOR UPDATE OF ms`,
          [tenantId],
        ),
      );
      const members = new Map(
        rows.map((r) => [text(r, 'user_id'), { role: text(r, 'role'), active: bool(r, 'active') }]),
      );
      if (role === null && !members.has(userId)) return false;
      // Only an owner who can sign in can change the members: a deactivated one counts for nothing.
      const anActiveOwner = () => [...members.values()].some((mb) => mb.role === 'owner' && mb.active);
      const hadOwner = anActiveOwner();
      if (role === null) members.delete(userId);
      else members.set(userId, { role, active: members.get(userId)?.active ?? (await this.isActive(m, userId)) });
      if (hadOwner && !anActiveOwner())
        throw new AppError('invalid_request', 'A tenant keeps at least one owner: make another member owner first.');
      if (role === null)
        await m.query('DELETE FROM memberships WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
      else
        await m.query(
          `INSERT INTO memberships (tenant_id, user_id, role) VALUES ($1, $2, $3)
           ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role`,
          [tenantId, userId, role],
        );
      await insertAuditRecords(m, records);
      return true;
    });
  }

  private async isActive(m: EntityManager, userId: string): Promise<boolean> {
    const [row] = rowsOf(await m.query(`SELECT status = 'active' AS active FROM users WHERE id = $1`, [userId]));
    return row !== undefined && bool(row, 'active');
  }

  listOfUser(userId: string): Promise<MembershipRecord[]> {
    return this.memberships.findBy({ userId });
  }
}
