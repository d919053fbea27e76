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

  listOfUser(userId: string): Promise<MembershipEntity[]> {
    return this.memberships.findBy({ userId });
  }
}
