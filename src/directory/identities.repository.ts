import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { newId } from '../platform/crypto/ids';
import { IdentityEntity, type IdentityProvider } from '../platform/database/entities/identity.entity';
import { UserEntity, type UserKind } from '../platform/database/entities/user.entity';

export interface ResolvedIdentity {
  readonly user: UserEntity;
  readonly identity: IdentityEntity;
  readonly created: boolean;
}

export interface IdentityClaim {
  readonly tenantId: string;
  readonly provider: IdentityProvider;
  readonly providerSubject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly metadata: Record<string, string | null>;
}

/** Users and their identities: the one place that creates or resolves either. */
@Injectable()
export class IdentitiesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  findIdentity(
    tenantId: string,
    provider: IdentityProvider,
    providerSubject: string,
    m: EntityManager = this.db.manager,
  ): Promise<IdentityEntity | null> {
    return m.findOneBy(IdentityEntity, { tenantId, provider, providerSubject });
  }

  findUser(id: string, m: EntityManager = this.db.manager): Promise<UserEntity | null> {
    return m.findOneBy(UserEntity, { id });
  }

  /**
   * Resolves the identity's owner, creating a user of `newUserKind` with the identity when the
   * credential is new. Concurrent first sign-ins race on the unique (tenant, provider, subject)
   * constraint; the loser re-reads the winner's row.
   */
  async resolveOrCreate(claim: IdentityClaim, newUserKind: UserKind): Promise<ResolvedIdentity> {
    const existing = await this.findWithUser(claim);
    if (existing) return { ...existing, created: false };
    try {
      return await this.db.transaction(async (m) => {
        const user = m.create(UserEntity, {
          id: newId('usr'),
          tenantId: claim.tenantId,
          kind: newUserKind,
          status: 'active',
          deactivatedAt: null,
        });
        await m.insert(UserEntity, user);
        const identity = m.create(IdentityEntity, {
          id: newId('idn'),
          tenantId: claim.tenantId,
          userId: user.id,
          provider: claim.provider,
          providerSubject: claim.providerSubject,
          email: claim.email,
          emailVerified: claim.emailVerified,
          status: 'active',
          metadata: claim.metadata,
        });
        await m.insert(IdentityEntity, identity);
        return {
          user: (await m.findOneBy(UserEntity, { id: user.id })) as UserEntity,
          identity: (await m.findOneBy(IdentityEntity, { id: identity.id })) as IdentityEntity,
          created: true,
        };
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const winner = await this.findWithUser(claim);
      if (!winner) throw err;
      return { ...winner, created: false };
    }
  }

  private async findWithUser(claim: IdentityClaim): Promise<{ user: UserEntity; identity: IdentityEntity } | null> {
    const identity = await this.findIdentity(claim.tenantId, claim.provider, claim.providerSubject);
    if (!identity) return null;
    const user = await this.findUser(identity.userId);
    return user ? { user, identity } : null;
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';
}
