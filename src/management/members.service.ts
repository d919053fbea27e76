import { Injectable } from '@nestjs/common';
import { controlPlaneEmailClaim } from '../directory/email-address';
import { IdentitiesRepository } from '../directory/identities.repository';
import { checkMember } from '../directory/member-settings';
import { MembershipsRepository } from '../directory/memberships.repository';
import { AppError } from '../errors/app-error';
import { consoleRecord } from './console-audit';
import type { AddMemberDto, MemberView } from './members.dto';
import type { MemberTenantAccess } from './tenant-membership.guard';
import { USER_ID_PATTERN } from '../directory/identifiers';

/**
 * A tenant's members in the console (contract 15): owners add them (or change a role), under the
 * admin CLI's rules (src/directory/member-settings.ts), and remove them; a tenant always keeps an
 * owner. Each change commits with its `console.member.*` row; a removed member's next request to
 * the tenant is refused, since the guard reads the membership on every request.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly memberships: MembershipsRepository,
    private readonly identities: IdentitiesRepository,
  ) {}

  async list(access: MemberTenantAccess): Promise<{ members: MemberView[] }> {
    const members = await this.memberships.listOfTenant(access.tenant.id);
    return { members: members.map((m) => ({ user_id: m.userId, email: m.email, role: m.role })) };
  }

  async add(access: MemberTenantAccess, body: AddMemberDto): Promise<{ member: MemberView }> {
    const checked = checkMember(body.email, body.role);
    if ('problem' in checked)
      throw new AppError('invalid_request', `${checked.problem.field} ${checked.problem.message}`);
    const { email, role } = checked.member;
    // The developer may not have signed in yet: the control-plane identity is created now.
    const { user } = await this.identities.resolveOrCreate(controlPlaneEmailClaim(email), 'regular');
    await this.memberships.putRecorded(access.tenant.id, user.id, role, [
      consoleRecord(access, 'member.add', user.id, { role }),
    ]);
    return { member: { user_id: user.id, email, role } };
  }

  async remove(access: MemberTenantAccess, userId: string): Promise<{ removed: true }> {
    const removed =
      USER_ID_PATTERN.test(userId) &&
      (await this.memberships.removeRecorded(access.tenant.id, userId, [
        consoleRecord(access, 'member.remove', userId),
      ]));
    if (!removed) throw new AppError('not_found', 'No such member of this tenant.');
    return { removed: true };
  }
}
