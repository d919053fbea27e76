import { Body, Controller, Param } from '@nestjs/common';
import { MANAGEMENT_ROUTES } from './management.routes';
import { AddMemberDto, type MemberView } from './members.dto';
import { MembersService } from './members.service';
import { MemberTenant, TenantRoute, type MemberTenantAccess } from './tenant-membership.guard';

/** A tenant's members in the console (contract 15): everyone reads, owners change. */
@Controller()
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @TenantRoute(MANAGEMENT_ROUTES.members)
  list(@MemberTenant() access: MemberTenantAccess): Promise<{ members: MemberView[] }> {
    return this.members.list(access);
  }

  @TenantRoute(MANAGEMENT_ROUTES.addMember)
  add(@MemberTenant() access: MemberTenantAccess, @Body() body: AddMemberDto): Promise<{ member: MemberView }> {
    return this.members.add(access, body);
  }

  @TenantRoute(MANAGEMENT_ROUTES.removeMember)
  remove(@MemberTenant() access: MemberTenantAccess, @Param('userId') userId: string): Promise<{ removed: true }> {
    return this.members.remove(access, userId);
  }
}
