import { Column, Entity, PrimaryColumn } from 'typeorm';

/** That a session existed; liveness is Redis's, except a revocation committed here (see the migrations). */
@Entity('sessions')
export class SessionRecordEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'user_id' }) userId!: string;
  @Column('text', { name: 'client_id' }) clientId!: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  /** After this the row is history only and `purge` deletes it (contract 12). */
  @Column('timestamptz', { name: 'expires_at' }) expiresAt!: Date;
  /** The last refresh of a sliding customer session (contract 13); null until the first. */
  @Column('timestamptz', { name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
}
