import { Column, Entity, PrimaryColumn } from 'typeorm';

export const MEMBERSHIP_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];

@Entity('memberships')
export class MembershipEntity {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId!: string;
  @PrimaryColumn('text', { name: 'user_id' }) userId!: string;
  @Column('text') role!: MembershipRole;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
