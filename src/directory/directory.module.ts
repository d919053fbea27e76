import { Module } from '@nestjs/common';
import { CryptoModule } from '../platform/crypto/crypto.module';
import { DatabaseModule } from '../platform/database/database.module';
import { AuditTrail } from './audit-trail.repository';
import { ChatPlatformAppsRepository } from './chat-platform-apps.repository';
import { ClientsRepository } from './clients.repository';
import { ControlPlaneSeedService } from './control-plane-seed.service';
import { IdentitiesRepository } from './identities.repository';
import { MembershipsRepository } from './memberships.repository';
import { SessionRecordsRepository } from './session-records.repository';
import { TenantsRepository } from './tenants.repository';

const SHARED = [
  AuditTrail,
  ChatPlatformAppsRepository,
  TenantsRepository,
  ClientsRepository,
  IdentitiesRepository,
  MembershipsRepository,
  SessionRecordsRepository,
  ControlPlaneSeedService,
];

/** Tenants, clients, users, identities, memberships: shared by every feature module. */
@Module({ imports: [DatabaseModule, CryptoModule], providers: SHARED, exports: SHARED })
export class DirectoryModule {}
