import { PendingRevocationsRepository } from '../../directory/pending-revocations.repository';
import { UserDeactivation } from '../../directory/user-deactivation';
import { UserErasure } from '../../directory/user-erasure';
import { UserRecordsRepository } from '../../directory/user-records.repository';
import { AdminInputError, type AdminCommand } from '../admin-command';
import type { CliContext } from '../cli-context';
import { findTargetUser, toUserResponse, USER_TARGET_OPTIONS } from './user-target';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';

export async function userRecords(ctx: CliContext): Promise<UserRecordsRepository> {
  return new UserRecordsRepository(await ctx.db(), await ctx.audit());
}

export const USER_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'user show',
    usage: 'user show --email EMAIL | --tenant ID --id usr_…',
    options: USER_TARGET_OPTIONS,
    async run(ctx, v) {
      return { user: toUserResponse(await findTargetUser(await userRecords(ctx), v)) };
    },
  },
  {
    name: 'user deactivate',
    usage: 'user deactivate --email EMAIL | --tenant ID --id usr_…',
    options: USER_TARGET_OPTIONS,
    async run(ctx, v) {
      const users = await userRecords(ctx);
      const user = await findTargetUser(users, v);
      // The same ordering as the console's deactivation (src/directory/user-deactivation.ts); the
      // command's own row commits with the status, before the Redis revocation (issue 22). Should
      // that revocation fail, the command fails saying the running service retries it.
      const notes = new PendingRevocationsRepository(await ctx.db());
      const deactivation = new UserDeactivation(await ctx.sessions(), users, notes);
      const { changed, revokedSessions } = await deactivation.deactivate(user.tenantId, user.id, 'admin', [
        ctx.adminRecord(this.name, user.tenantId, user.id),
      ]);
      return {
        user: { id: user.id, tenant: user.tenantId, status: 'deactivated', changed },
        revoked_sessions: revokedSessions,
      };
    },
  },
  {
    name: 'user delete',
    usage: 'user delete --tenant ID --id usr_…   (erases a customer user; audit keeps ids only)',
    options: USER_TARGET_OPTIONS,
    async run(ctx, v) {
      const users = await userRecords(ctx);
      if (v['email'] !== undefined) throw new AdminInputError('user delete takes --tenant and --id');
      const user = await findTargetUser(users, v);
      if (user.tenantId === CONTROL_PLANE_TENANT_ID)
        throw new AdminInputError('user delete erases customer users; deactivate a control-plane user instead');
      // The same erasure as a player's own DELETE /t/{tenantId}/me (contract 13), by an operator.
      // The command's own row commits with the erasure (issue 22).
      const erased = await new UserErasure(await ctx.sessions(), users).erase(user.tenantId, user.id, 'admin', (e) => [
        ctx.adminRecord(this.name, user.tenantId, user.id, { revoked_sessions: e.revokedSessions }),
      ]);
      if (erased === null) throw new AdminInputError(`no user ${user.id} in tenant ${user.tenantId}`);
      return { deleted: { id: user.id, tenant: user.tenantId }, revoked_sessions: erased.revokedSessions };
    },
  },
];
