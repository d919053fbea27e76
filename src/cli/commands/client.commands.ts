import { checkClientSettings, withoutUserinfo, type ClientSettingField } from '../../directory/client-settings';
import { checkRedirectUri, webOriginsOf } from '../../directory/web-origins';
import { AdminInputError, list, optional, required, type AdminCommand } from '../admin-command';
import { clientsRepository, customerTenant } from './directory-repositories';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { CLIENT_ID_PATTERN } from '../../directory/identifiers';

/** The option that gives each client setting. */
const OPTION_OF: Record<ClientSettingField, string> = {
  type: '--type',
  scopes: '--scopes',
  redirect_uris: '--redirect-uri',
  web_origins: '--web-origins',
};

/** `--redirect-uri URL`: no fragment or userinfo ever, https in production (loopback apart). */
export function parseRedirectUri(value: string, production: boolean): string {
  const checked = checkRedirectUri(value, production);
  if ('problem' in checked) throw new AdminInputError(`--redirect-uri: ${withoutUserinfo(value)} ${checked.problem}`);
  return checked.url;
}

export const CLIENT_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'client create',
    usage:
      'client create --tenant ID --id cli_… --name NAME --type browser|native --scopes "openid offline_access" --redirect-uri URL [--web-origins "https://a.example https://b.example"]',
    options: {
      tenant: { type: 'string' },
      id: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string' },
      scopes: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      // Contract 11: origins the client's pages call from, beyond its redirect URIs' origins.
      'web-origins': { type: 'string' },
    },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      const id = required(v, 'id');
      const name = required(v, 'name');
      if (!CLIENT_ID_PATTERN.test(id)) throw new AdminInputError(`--id must match ${CLIENT_ID_PATTERN.source}`);
      // The same rules as the console's POST and PATCH of a client (src/directory/client-settings.ts).
      const checked = checkClientSettings(
        {
          type: required(v, 'type'),
          scopes: (optional(v, 'scopes') ?? '').split(' ').filter(Boolean),
          redirectUris: list(v, 'redirect-uri'),
          webOrigins: (optional(v, 'web-origins') ?? '').split(' ').filter(Boolean),
        },
        ctx.production(),
      );
      if ('problem' in checked)
        throw new AdminInputError(`${OPTION_OF[checked.problem.field]}: ${checked.problem.message}`);
      const { type, scopes, redirectUris, webOrigins } = checked.settings;
      await customerTenant(ctx, tenant);
      const clients = await clientsRepository(ctx);
      if (await clients.find(id)) throw new AdminInputError(`client ${id} already exists`);
      await clients.insert({
        id,
        tenantId: tenant,
        name,
        type,
        enabled: true,
        scopes,
        redirectUris,
        webOrigins,
        secretDigest: null,
      });
      await ctx.auditAdmin(this.name, tenant, id, { type });
      return {
        client: {
          client_id: id,
          tenant,
          name,
          type,
          enabled: true,
          scopes,
          redirect_uris: redirectUris,
          web_origins: webOriginsOf({ type, redirectUris, webOrigins }),
        },
      };
    },
  },
  {
    name: 'client disable',
    usage: 'client disable --tenant ID --id cli_…',
    options: { tenant: { type: 'string' }, id: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      const id = required(v, 'id');
      if (tenant === CONTROL_PLANE_TENANT_ID || !(await (await clientsRepository(ctx)).disable(tenant, id)))
        throw new AdminInputError(`no client ${id} in tenant ${tenant}`);
      await ctx.auditAdmin(this.name, tenant, id);
      return { client: { client_id: id, enabled: false } };
    },
  },
  {
    name: 'client list',
    usage: 'client list --tenant ID',
    options: { tenant: { type: 'string' } },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      await customerTenant(ctx, tenant);
      const clients = await (await clientsRepository(ctx)).listOf(tenant);
      return {
        clients: clients.map((c) => ({
          client_id: c.id,
          name: c.name,
          type: c.type,
          enabled: c.enabled,
          scopes: c.scopes,
          web_origins: webOriginsOf(c),
        })),
      };
    },
  },
];
