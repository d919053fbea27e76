import { Module } from '@nestjs/common';
import { CryptoModule } from '../platform/crypto/crypto.module';
import { Pseudonymizer } from '../platform/crypto/digests';
import { DatabaseModule } from '../platform/database/database.module';
import { AuditTrail } from './audit-trail.repository';
import { ChatPlatformAppsRepository } from './chat-platform-apps.repository';
import { ClientsRepository } from './clients.repository';
import { ControlPlaneSeedService } from './control-plane-seed.service';
import { IdentitiesRepository } from './identities.repository';
import { IdentityEmailDigest } from './identity-email-digest';
import { IdentityProvidersRepository } from './identity-providers.repository';
import { MembershipsRepository } from './memberships.repository';
import { SessionStore } from '../platform/session-store/session-store';
import { SessionStoreModule } from '../platform/session-store/session-store.module';
import { AuditPagesRepository } from './audit-pages.repository';
import { DailyStatsRepository } from './daily-stats.repository';
import { PlayerLookupRepository } from './player-lookup.repository';
import { PendingRevocationsRepository } from './pending-revocations.repository';
import { PendingRevocationsWorker } from './pending-revocations.worker';
import { ReplayAlarm } from './replay-alarm';
import { SessionRecordsRepository } from './session-records.repository';
import { TenantsRepository } from './tenants.repository';
import { UserDeactivation } from './user-deactivation';
import { UserErasure } from './user-erasure';
import { UserRecordsRepository } from './user-records.repository';

const SHARED = [
  AuditTrail,
  ChatPlatformAppsRepository,
  TenantsRepository,
  ClientsRepository,
  {
    provide: IdentityEmailDigest,
    useFactory: (keys: Pseudonymizer) => new IdentityEmailDigest(() => keys),
    inject: [Pseudonymizer],
  },
  IdentitiesRepository,
  IdentityProvidersRepository,
  MembershipsRepository,
  SessionRecordsRepository,
  ControlPlaneSeedService,
  UserRecordsRepository,
  PlayerLookupRepository,
  AuditPagesRepository,
  DailyStatsRepository,
  ReplayAlarm,
  PendingRevocationsRepository,
  // The orderings shared with the admin CLI's `user deactivate` and `user delete` (contracts 12,
  // 13, 15), on the service's stores.
  {
    provide: UserErasure,
    useFactory: (sessions: SessionStore, users: UserRecordsRepository) => new UserErasure(sessions, users),
    inject: [SessionStore, UserRecordsRepository],
  },
  {
    provide: UserDeactivation,
    useFactory: (sessions: SessionStore, users: UserRecordsRepository, notes: PendingRevocationsRepository) =>
      new UserDeactivation(sessions, users, notes),
    inject: [SessionStore, UserRecordsRepository, PendingRevocationsRepository],
  },
];

/**
 * Tenants, clients, users, identities, memberships: shared by every feature module. The worker
 * that retries pending revocations runs once per service, so it is provided here and not exported.
 */
@Module({
  imports: [DatabaseModule, CryptoModule, SessionStoreModule],
  providers: [...SHARED, PendingRevocationsWorker],
  exports: SHARED,
})
export class DirectoryModule {}
