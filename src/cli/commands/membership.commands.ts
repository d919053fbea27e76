import { canonicalEmail, controlPlaneEmailClaim } from '../../directory/email-address';
import { checkMember } from '../../directory/member-settings';
import { AdminInputError, required, type AdminCommand } from '../admin-command';
import { customerTenant, identitiesRepository, membershipsRepository } from './directory-repositories';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';

export const MEMBERSHIP_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'membership add',
    usage: 'membership add --tenant ID --email EMAIL --role owner|admin|developer|viewer',
    options: { tenant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      // The same rules as the console's POST …/members (src/directory/member-settings.ts).
      const checked = checkMember(required(v, 'email'), required(v, 'role'));
      if ('problem' in checked) throw new AdminInputError(`--${checked.problem.field} ${checked.problem.message}`);
      const { email, role } = checked.member;
      await customerTenant(ctx, tenant);
      // The developer may not have signed in yet: the control-plane user and identity are created
      // now and resolved at their first sign-in.
      const { user } = await (
        await identitiesRepository(ctx)
      ).resolveOrCreate(controlPlaneEmailClaim(email), 'regular');
      await (await membershipsRepository(ctx)).upsert(tenant, user.id, role);
      await ctx.auditAdmin(this.name, tenant, user.id, { role });
      return { membership: { tenant, user_id: user.id, role } };
    },
  },
  {
    name: 'membership remove',
    usage: 'membership remove --tenant ID --email EMAIL',
    options: { tenant: { type: 'string' }, email: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      const email = canonicalEmail(required(v, 'email'));
      const identity = await (await identitiesRepository(ctx)).findIdentity(CONTROL_PLANE_TENANT_ID, 'email', email);
      const removed = identity ? await (await membershipsRepository(ctx)).remove(tenant, identity.userId) : false;
      if (!identity || !removed) throw new AdminInputError('no such membership');
      await ctx.auditAdmin(this.name, tenant, identity.userId);
      return { membership: { tenant, removed: true } };
    },
  },
  {
    name: 'membership list',
    usage: 'membership list --tenant ID',
    options: { tenant: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      await customerTenant(ctx, tenant);
      const members = await (await membershipsRepository(ctx)).listOfTenant(tenant);
      return { memberships: members.map((m) => ({ user_id: m.userId, email: m.email, role: m.role })) };
    },
  },
];
