import type { DataSource } from 'typeorm';
import { ChatPlatformAppEntity } from '../platform/database/entities/chat-platform-app.entity';
import { ClientEntity } from '../platform/database/entities/client.entity';
import { IdentityProviderEntity } from '../platform/database/entities/identity-provider.entity';
import { MembershipEntity } from '../platform/database/entities/membership.entity';
import { SessionRecordEntity } from '../platform/database/entities/session-record.entity';
import { TenantEntity } from '../platform/database/entities/tenant.entity';
import type { SecretBox } from '../platform/crypto/secret-box';
import { ChatPlatformAppsRepository } from './chat-platform-apps.repository';
import { ClientsRepository } from './clients.repository';
import { IdentityProvidersRepository } from './identity-providers.repository';
import { MembershipsRepository } from './memberships.repository';
import { SessionRecordsRepository } from './session-records.repository';
import { TenantsRepository } from './tenants.repository';

/**
 * The directory's repositories over a data source of their own, for the admin CLI (no Nest
 * container): the entity mapping stays inside the directory.
 */
export const standaloneRepositories = {
  tenants: (db: DataSource): TenantsRepository => new TenantsRepository(db.getRepository(TenantEntity)),
  clients: (db: DataSource): ClientsRepository => new ClientsRepository(db.getRepository(ClientEntity)),
  memberships: (db: DataSource): MembershipsRepository => new MembershipsRepository(db.getRepository(MembershipEntity)),
  sessionRecords: (db: DataSource): SessionRecordsRepository =>
    new SessionRecordsRepository(db.getRepository(SessionRecordEntity)),
  chatApps: (db: DataSource, box: SecretBox): ChatPlatformAppsRepository =>
    new ChatPlatformAppsRepository(db.getRepository(ChatPlatformAppEntity), box),
  identityProviders: (db: DataSource, box: SecretBox): IdentityProvidersRepository =>
    new IdentityProvidersRepository(db.getRepository(IdentityProviderEntity), box),
};
