import { AdminInputError, required, type AdminCommand } from '../admin-command';
import { SESSION_ID_PATTERN } from '../../directory/identifiers';
import { carryOutNoted } from '../../directory/noted-revocation';
import { PendingRevocationsRepository } from '../../directory/pending-revocations.repository';

import { sessionRecordsRepository } from './directory-repositories';
import { userRecords } from './user.commands';
import { findTargetUser, USER_TARGET_OPTIONS } from './user-target';

export const SESSION_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'session list',
    usage: 'session list --email EMAIL | --tenant ID --id usr_…',
    options: USER_TARGET_OPTIONS,
    async run(ctx, v) {
      const users = await userRecords(ctx);
      const user = await findTargetUser(users, v);
      const sessions = await ctx.sessions();
      const rows = await users.unexpiredSessions(user.id);
      const ids = [...new Set([...(await sessions.listUserSessions(user.id)), ...rows.map((r) => r.id)])];
      const live = await Promise.all(ids.map((id) => sessions.get(id)));
      return {
        sessions: ids.flatMap((id, i) => {
          const s = live[i];
          if (!s || s.userId !== user.id) return [];
          const row = rows.find((r) => r.id === id);
          return [
            {
              session_id: id,
              client_id: s.clientId,
              created_at: row?.createdAt.toISOString() ?? null,
              expires_at: row?.expiresAt.toISOString() ?? null,
            },
          ];
        }),
      };
    },
  },
  {
    name: 'session revoke',
    usage: 'session revoke --id ses_…',
    options: { id: { type: 'string' } },
    async run(ctx, v) {
      const id = required(v, 'id');
      if (!SESSION_ID_PATTERN.test(id)) throw new AdminInputError('--id must be a session id (ses_…)');
      const owner = await (await userRecords(ctx)).sessionOwner(id);
      const sessions = await ctx.sessions();
      // The audit rows, the row's mark and the note of the Redis revocation go first, in one
      // transaction (issue 22, point 6): the Redis revocation cannot share it, so they record the
      // intent, and a revocation that then fails leaves them and a failed command, never a revoked
      // session without its row. The running service carries a noted revocation out.
      let note: string | null = null;
      if (owner) {
        const { tenantId, userId } = owner;
        note = await (
          await sessionRecordsRepository(ctx)
        ).recordNotedRevocation(tenantId, id, [
          { type: 'session.revoked', tenantId, subject: userId, data: { session_id: id, by: 'admin' } },
          ctx.adminRecord(this.name, tenantId, id),
        ]);
      }
      const notes = new PendingRevocationsRepository(await ctx.db());
      const revoked = await carryOutNoted(notes, note, `session ${id} is revoked`, () =>
        sessions.revoke(id, { tombstone: true }),
      );
      return { session: { id, revoked } };
    },
  },
];
