import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('consents')
export class ConsentEntity {
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @PrimaryColumn('text', { name: 'user_id' }) userId!: string;
  @PrimaryColumn('text', { name: 'client_id' }) clientId!: string;
  @Column('text', { array: true }) scopes!: string[];
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
