import { AdminInputError, required, type AdminCommand } from '../admin-command';
import { tenantsRepository } from './directory-repositories';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { TENANT_ID_PATTERN } from '../../directory/identifiers';

export const TENANT_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'tenant create',
    usage: 'tenant create --id ID --name NAME',
    options: { id: { type: 'string' }, name: { type: 'string' } },
    async run(ctx, v) {
      const id = required(v, 'id');
      const name = required(v, 'name');
      if (!TENANT_ID_PATTERN.test(id) || id === CONTROL_PLANE_TENANT_ID)
        throw new AdminInputError(`--id must match ${TENANT_ID_PATTERN.source} and not be control-plane`);
      if (name.length > 200) throw new AdminInputError('--name must be at most 200 characters');
      const tenants = await tenantsRepository(ctx);
      if (await tenants.find(id)) throw new AdminInputError(`tenant ${id} already exists`);
      const t = await tenants.create(id, name, 'customer');
      await ctx.auditAdmin(this.name, id, id);
      return { tenant: { id: t.id, name: t.name, status: t.status } };
    },
  },
  {
    name: 'tenant deactivate',
    usage: 'tenant deactivate --id ID',
    options: { id: { type: 'string' } },
    async run(ctx, v) {
      const id = required(v, 'id');
      if (!(await (await tenantsRepository(ctx)).setStatus(id, 'inactive')))
        throw new AdminInputError(`no customer tenant ${id}`);
      await ctx.auditAdmin(this.name, id, id);
      return { tenant: { id, status: 'inactive' } };
    },
  },
  {
    name: 'tenant list',
    usage: 'tenant list',
    options: {},
    async run(ctx) {
      const tenants = await (await tenantsRepository(ctx)).listCustomers();
      return { tenants: tenants.map((t) => ({ id: t.id, name: t.name, status: t.status })) };
    },
  },
];
