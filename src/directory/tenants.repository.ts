import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { TenantEntity } from '../platform/database/entities/tenant.entity';
import type { TenantKind, TenantRecord, TenantStatus } from './records';

@Injectable()
export class TenantsRepository {
  constructor(@InjectRepository(TenantEntity) private readonly tenants: Repository<TenantEntity>) {}

  find(id: string): Promise<TenantRecord | null> {
    return this.tenants.findOneBy({ id });
  }

  /** An active customer tenant, or null (unknown, inactive and control-plane look the same). */
  findActiveCustomer(id: string): Promise<TenantRecord | null> {
    return this.tenants.findOneBy({ id, kind: 'customer', status: 'active' });
  }

  /** The ids of every active customer tenant: the known-tenant set (src/guest/known-tenants.ts). */
  async activeCustomerIds(): Promise<string[]> {
    const rows = await this.tenants.find({ select: { id: true }, where: { kind: 'customer', status: 'active' } });
    return rows.map((t) => t.id);
  }

  async create(id: string, name: string, kind: TenantKind): Promise<TenantRecord> {
    await this.tenants.insert({ id, name, kind, status: 'active' });
    return (await this.find(id)) as TenantRecord;
  }

  async setStatus(id: string, status: TenantStatus): Promise<boolean> {
    const result = await this.tenants.update({ id, kind: 'customer' }, { status });
    return (result.affected ?? 0) > 0;
  }

  /** Every customer tenant, for operators (`tenant list`). */
  listCustomers(): Promise<TenantRecord[]> {
    return this.tenants.find({ where: { kind: 'customer' }, order: { id: 'ASC' } });
  }

  findActiveByIds(ids: readonly string[]): Promise<TenantRecord[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.tenants
      .createQueryBuilder('t')
      .where('t.id = ANY(:ids)', { ids })
      .andWhere("t.status = 'active' AND t.kind = 'customer'")
      .orderBy('t.name')
      .getMany();
  }
}
