import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('identity_providers')
export class IdentityProviderEntity {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId!: string;
  @PrimaryColumn('text') id!: string;
  @Column('text') issuer!: string;
  @Column('text', { name: 'client_id' }) clientId!: string;
  @Column('text', { name: 'secret_sealed' }) secretSealed!: string;
  @Column('text', { name: 'secret_kind' }) secretKind!: 'client_secret' | 'apple_key';
  @Column('text', { name: 'apple_team_id', nullable: true }) appleTeamId!: string | null;
  @Column('text', { name: 'apple_key_id', nullable: true }) appleKeyId!: string | null;
  @Column('text', { array: true }) scopes!: string[];
  @Column('text', { name: 'native_client_ids', array: true }) nativeClientIds!: string[];
  @Column('jsonb') metadata!: Record<string, unknown>;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
