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
  /**
   * A customer session's secret digest, scope and guest flag: what rebuilds the live session after
   * Redis lost it (session recovery). Null for control-plane sessions and rows older than them.
   */
  @Column('text', { name: 'secret_digest', nullable: true }) secretDigest!: string | null;
  @Column('text', { name: 'scope', nullable: true }) scope!: string | null;
  @Column('boolean', { name: 'guest', nullable: true }) guest!: boolean | null;
  /** The newest refresh-token generation presented: an older token never rebuilds the session. */
  @Column('integer', { name: 'presented_generation' }) presentedGeneration!: number;
  /** When that generation was last presented; null: never. */
  @Column('timestamptz', { name: 'generation_used_at', nullable: true }) generationUsedAt!: Date | null;
  /** The activity before that generation was first presented; null: the session's creation. */
  @Column('timestamptz', { name: 'prior_activity_at', nullable: true }) priorActivityAt!: Date | null;
  /** When the live session was last rebuilt from this row; null: never. */
  @Column('timestamptz', { name: 'recovered_at', nullable: true }) recoveredAt!: Date | null;
  /**
   * An upgrade's hand-over to the session that replaced this one (contract 13): the replacement,
   * the salt of the secret it takes from this session's token, this session's generation when the
   * upgrade began, and when the upgrade's answer was sent (null: never, a 503 after the commit).
   */
  @Column('text', { name: 'successor_id', nullable: true }) successorId!: string | null;
  @Column('text', { name: 'successor_salt', nullable: true }) successorSalt!: string | null;
  @Column('integer', { name: 'successor_generation', nullable: true }) successorGeneration!: number | null;
  @Column('timestamptz', { name: 'successor_answered_at', nullable: true }) successorAnsweredAt!: Date | null;
}
