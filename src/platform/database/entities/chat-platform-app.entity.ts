import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('chat_platform_apps')
export class ChatPlatformAppEntity {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'client_id' }) clientId!: string;
  @Column('text', { name: 'client_secret_sealed' }) clientSecretSealed!: string;
  @Column('text', { name: 'redirect_uri' }) redirectUri!: string;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
