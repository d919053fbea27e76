import { Column, Entity, PrimaryColumn } from 'typeorm';

export type ClientType = 'confidential' | 'browser' | 'native';

@Entity('clients')
export class ClientEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') name!: string;
  @Column('text') type!: ClientType;
  @Column('boolean') enabled!: boolean;
  @Column('text', { array: true }) scopes!: string[];
  @Column('text', { array: true, name: 'redirect_uris' }) redirectUris!: string[];
  /** Extra web origins of a browser client; the origins of its redirect URIs count too. */
  @Column('text', { array: true, name: 'web_origins' }) webOrigins!: string[];
  @Column('text', { name: 'secret_digest', nullable: true }) secretDigest!: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
