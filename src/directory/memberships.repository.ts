import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { MembershipEntity, type MembershipRole } from '../platform/database/entities/membership.entity';

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

  find(tenantId: string, userId: string): Promise<MembershipEntity | null> {
    return this.memberships.findOneBy({ tenantId, userId });
  }

  /** A tenant's members with their control-plane email, for operators (`membership list`). */
  async listOfTenant(tenantId: string): Promise<Array<{ userId: string; email: string | null; role: string }>> {
    const rows = await this.memberships.manager.query<Array<{ user_id: string; email: string | null; role: string }>>(
      `SELECT m.user_id, i.email, m.role FROM memberships m
         LEFT JOIN identities i ON i.user_id = m.user_id AND i.provider = 'email'
        WHERE m.tenant_id = $1 ORDER BY i.email, m.user_id`,
      [tenantId],
    );
    return rows.map((r) => ({ userId: r.user_id, email: r.email, role: r.role }));
  }

  listOfUser(userId: string): Promise<MembershipEntity[]> {
    return this.memberships.findBy({ userId });
  }
}
