import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `email`, `chat_platform`, or the id of one of the tenant's OpenID Connect providers (contract 14). */
export type IdentityProvider = string;

@Entity('identities')
export class IdentityEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'user_id' }) userId!: string;
  @Column('text') provider!: IdentityProvider;
  @Column('text', { name: 'provider_subject' }) providerSubject!: string;
  @Column('text', { nullable: true }) email!: string | null;
  @Column('boolean', { name: 'email_verified' }) emailVerified!: boolean;
  /** Keyed digest of the address a player is found by (src/directory/identity-email-digest.ts). */
  @Column('text', { name: 'email_digest', nullable: true, select: false }) emailDigest?: string | null;
  @Column('text') status!: 'active' | 'inactive';
  @Column('jsonb') metadata!: Record<string, string | null>;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
