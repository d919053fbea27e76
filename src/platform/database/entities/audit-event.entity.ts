import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('audit_events')
export class AuditEventEntity {
  @PrimaryColumn({ type: 'bigint', generatedIdentity: 'ALWAYS' }) id!: string;
  @Column('text') type!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') subject!: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('jsonb') data!: Record<string, string | number | boolean | null>;
}
