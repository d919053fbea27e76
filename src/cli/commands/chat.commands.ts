import { required, type AdminCommand } from '../admin-command';
import { parseRedirectUri } from './client.commands';
import { chatAppsRepository, customerTenant } from './directory-repositories';

export const CHAT_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'chat configure',
    usage: 'chat configure --tenant ID --client-id ID --client-secret SECRET --redirect-uri URL',
    options: {
      tenant: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      'redirect-uri': { type: 'string' },
    },
    async run(ctx, v) {
      const tenant = required(v, 'tenant');
      const clientId = required(v, 'client-id');
      const clientSecret = required(v, 'client-secret');
      // The platform sends its authorization code there: the rules of a client's redirect URI.
      const redirectUri = parseRedirectUri(required(v, 'redirect-uri'), ctx.production());
      await customerTenant(ctx, tenant);
      await (await chatAppsRepository(ctx)).configure({ tenantId: tenant, clientId, clientSecret, redirectUri });
      // The audit row names the application, never its secret.
      await ctx.auditAdmin(this.name, tenant, tenant, { client_id: clientId });
      return { chat_platform: { tenant, client_id: clientId, redirect_uri: redirectUri } };
    },
  },
  {
    name: 'chat reseal',
    usage: 'chat reseal                      (after a PRIVACY_KEY rotation: re-seal under the first key)',
    options: {},
    async run(ctx) {
      const result = await (await chatAppsRepository(ctx)).resealAll();
      await ctx.auditAdmin(this.name, 'control-plane', 'chat_platform_apps', {
        resealed: result.resealed,
        unreadable: result.unreadable.length,
      });
      return result;
    },
  },
];
