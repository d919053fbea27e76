import { Module } from '@nestjs/common';
import { DirectoryModule } from '../directory/directory.module';
import { ClientsController } from './clients.controller';
import { ConsoleClientsService } from './clients.service';
import { TenantMembershipGuard } from './tenant-membership.guard';
import { TenantsController } from './tenants.controller';
import { TenantsService } from './tenants.service';

/**
 * Management API for developers signed in to the console. Authentication is the
 * `bearer:management` policy registered by ManagementAuthModule; this module adds only the
 * tenant-membership and role rule (tenant-roles.ts), the tenant views and the console's changes
 * of a tenant (contract 15).
 */
@Module({
  imports: [DirectoryModule],
  controllers: [TenantsController, ClientsController],
  providers: [TenantsService, ConsoleClientsService, TenantMembershipGuard],
})
export class ManagementModule {}
