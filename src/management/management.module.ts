import { Module } from '@nestjs/common';
import { DirectoryModule } from '../directory/directory.module';
import { TenantMembershipGuard } from './tenant-membership.guard';
import { TenantsController } from './tenants.controller';
import { TenantsService } from './tenants.service';

/**
 * Management API for developers signed in to the console. Authentication is the
 * `bearer:management` policy registered by ManagementAuthModule; this module adds only the
 * tenant-membership rule and the read-only views.
 */
@Module({
  imports: [DirectoryModule],
  controllers: [TenantsController],
  providers: [TenantsService, TenantMembershipGuard],
})
export class ManagementModule {}
