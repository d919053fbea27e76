import { Column, Entity, PrimaryColumn } from 'typeorm';

export type UserKind = 'guest' | 'provisional' | 'regular';
export type UserStatus = 'active' | 'deactivated';

@Entity('users')
export class UserEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') kind!: UserKind;
  @Column('text') status!: UserStatus;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'deactivated_at', nullable: true }) deactivatedAt!: Date | null;
}
