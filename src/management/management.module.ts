import { Module } from '@nestjs/common';
import { SessionStoreModule } from '../platform/session-store/session-store.module';
import { DirectoryModule } from '../directory/directory.module';
import { ClientsController } from './clients.controller';
import { ConsoleClientsService } from './clients.service';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';
import { PlayersController } from './players.controller';
import { PlayersService } from './players.service';
import { TenantMembershipGuard } from './tenant-membership.guard';
import { TenantViewsController } from './tenant-views.controller';
import { TenantViewsService } from './tenant-views.service';
import { TenantsController } from './tenants.controller';
import { TenantsService } from './tenants.service';

/**
 * Management API for developers signed in to the console. Authentication is the
 * `bearer:management` policy registered by ManagementAuthModule; this module adds only the
 * tenant-membership and role rule (tenant-roles.ts), the tenant views and the console's changes
 * of a tenant (contract 15).
 */
@Module({
  imports: [DirectoryModule, SessionStoreModule],
  controllers: [TenantsController, ClientsController, PlayersController, TenantViewsController, MembersController],
  providers: [
    TenantsService,
    ConsoleClientsService,
    PlayersService,
    TenantViewsService,
    MembersService,
    TenantMembershipGuard,
  ],
})
export class ManagementModule {}
