import { Body, Controller, Param } from '@nestjs/common';
import { Route } from '../http/route';
import { MANAGEMENT_ROUTES } from './management.routes';
import { AddMemberDto, type MemberView } from './members.dto';
import { MembersService } from './members.service';
import { ForTenantAction, MemberTenant, type MemberTenantAccess } from './tenant-membership.guard';

/** A tenant's members in the console (contract 15): everyone reads, owners change. */
@Controller()
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Route(MANAGEMENT_ROUTES.members)
  @ForTenantAction('member.list')
  list(@MemberTenant() access: MemberTenantAccess): Promise<{ members: MemberView[] }> {
    return this.members.list(access);
  }

  @Route(MANAGEMENT_ROUTES.addMember)
  @ForTenantAction('member.add')
  add(@MemberTenant() access: MemberTenantAccess, @Body() body: AddMemberDto): Promise<{ member: MemberView }> {
    return this.members.add(access, body);
  }

  @Route(MANAGEMENT_ROUTES.removeMember)
  @ForTenantAction('member.remove')
  remove(@MemberTenant() access: MemberTenantAccess, @Param('userId') userId: string): Promise<{ removed: true }> {
    return this.members.remove(access, userId);
  }
}
