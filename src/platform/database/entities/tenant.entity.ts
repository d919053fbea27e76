import { Column, Entity, PrimaryColumn } from 'typeorm';

export type TenantKind = 'control_plane' | 'customer';
export type TenantStatus = 'active' | 'inactive';

@Entity('tenants')
export class TenantEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') name!: string;
  @Column('text') kind!: TenantKind;
  @Column('text') status!: TenantStatus;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
