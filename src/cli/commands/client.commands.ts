import { isCustomerScope } from '../../directory/customer-scopes';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/tenants.repository';
import { checkRedirectUri, checkWebOrigin, webOriginsOf, type CheckedUrl } from '../../directory/web-origins';
import { CLIENT_ID_PATTERN } from '../../platform/crypto/ids';
import { AdminInputError, list, optional, required, type AdminCommand } from '../admin-command';
import { clientsRepository, customerTenant } from './directory-repositories';

/** The checked URL, or an input error naming the option and the value (any userinfo masked). */
function accepted(option: string, value: string, checked: CheckedUrl): string {
  if ('problem' in checked)
    throw new AdminInputError(`${option}: ${value.replace(/\/\/[^/?#]*@/, '//…@')} ${checked.problem}`);
  return checked.url;
}

/**
 * `--web-origins "https://a.example https://b.example"`: unique http(s) origins, browser clients
 * only; https in production, loopback apart (issue 22, point 6).
 */
function parseWebOrigins(value: string, type: string, production: boolean): string[] {
  const given = value.split(' ').filter(Boolean);
  if (given.length > 0 && type !== 'browser') throw new AdminInputError('--web-origins is for browser clients only');
  return [...new Set(given.map((v) => accepted('--web-origins', v, checkWebOrigin(v, production))))];
}

/** `--redirect-uri URL` (repeatable): no fragment or userinfo ever, https in production (loopback apart). */
export function parseRedirectUri(value: string, production: boolean): string {
  return accepted('--redirect-uri', value, checkRedirectUri(value, production));
}

function parseScopes(raw: string): string[] {
  const scopes = raw.split(' ').filter(Boolean);
  if (scopes.some((s) => !isCustomerScope(s)) || new Set(scopes).size !== scopes.length)
    throw new AdminInputError('--scopes must be unique values of: openid profile email offline_access');
  return scopes;
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
      const type = required(v, 'type');
      if (!CLIENT_ID_PATTERN.test(id)) throw new AdminInputError(`--id must match ${CLIENT_ID_PATTERN.source}`);
      if (type !== 'browser' && type !== 'native') throw new AdminInputError('--type must be browser or native');
      const scopes = parseScopes(optional(v, 'scopes') ?? '');
      const production = ctx.production();
      const redirectUris = list(v, 'redirect-uri').map((u) => parseRedirectUri(u, production));
      const webOrigins = parseWebOrigins(optional(v, 'web-origins') ?? '', type, production);
      // A browser client without scopes or a redirect URI could never complete a flow.
      if (type === 'browser' && (scopes.length === 0 || redirectUris.length === 0))
        throw new AdminInputError('a browser client needs --scopes and at least one --redirect-uri');
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
