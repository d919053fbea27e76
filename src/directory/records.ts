import type { ClientType } from '../platform/database/entities/client.entity';
import type { IdentityProvider } from '../platform/database/entities/identity.entity';
import { MEMBERSHIP_ROLES, type MembershipRole } from '../platform/database/entities/membership.entity';
import type { TenantKind, TenantStatus } from '../platform/database/entities/tenant.entity';
import type { UserKind, UserStatus } from '../platform/database/entities/user.entity';

/**
 * The directory's records as the features see them: plain read-only values. The TypeORM entities
 * under platform/database/entities are the mapping of these rows, kept inside the directory and
 * platform; a feature reads and changes records only through the directory's repositories.
 */
export { MEMBERSHIP_ROLES };
export type { ClientType, MembershipRole, TenantKind, TenantStatus, UserKind, UserStatus };

export const CLIENT_TYPES: readonly ClientType[] = ['confidential', 'browser', 'native'];
export const USER_KINDS: readonly UserKind[] = ['guest', 'provisional', 'regular'];
export const USER_STATUSES: readonly UserStatus[] = ['active', 'deactivated'];

export interface TenantRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: TenantKind;
  readonly status: TenantStatus;
  readonly createdAt: Date;
}

export interface ClientRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly type: ClientType;
  readonly enabled: boolean;
  readonly scopes: readonly string[];
  readonly redirectUris: readonly string[];
  /** Extra web origins of a browser client; the origins of its redirect URIs count too. */
  readonly webOrigins: readonly string[];
  readonly secretDigest: string | null;
  readonly createdAt: Date;
}

export interface UserRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly kind: UserKind;
  readonly status: UserStatus;
  readonly createdAt: Date;
  readonly deactivatedAt: Date | null;
}

export interface MembershipRecord {
  readonly tenantId: string;
  readonly userId: string;
  readonly role: MembershipRole;
  readonly createdAt: Date;
}

/** A credential as a provider proved it, before it is resolved to a user. */
export interface IdentityClaim {
  readonly tenantId: string;
  readonly provider: IdentityProvider;
  readonly providerSubject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly metadata: Record<string, string | null>;
}
