import { AdminInputError, optional, required, type AdminCommand } from '../admin-command';
import { CONTROL_PLANE_TENANT_ID } from '../../directory/control-plane';
import { chatAppsRepository, customerTenant } from './directory-repositories';
import { parseRedirectUri } from './client.commands';
import { readSecretLine } from './secret-input';

export const CHAT_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'chat configure',
    usage:
      'chat configure --tenant ID --client-id ID (--client-secret-file PATH|- | --client-secret SECRET) --redirect-uri URL',
    options: {
      tenant: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret-file': { type: 'string' },
      // Contract 7 names it, so scripts written against the contract keep working; a warning says
      // why the file is better.
      'client-secret': { type: 'string' },
      'redirect-uri': { type: 'string' },
    },
    async run(ctx, v) {
      const onArgv = optional(v, 'client-secret');
      const fromFile = optional(v, 'client-secret-file');
      if ((onArgv === undefined) === (fromFile === undefined))
        throw new AdminInputError('give one of --client-secret-file PATH (or - for stdin) and --client-secret');
      if (onArgv !== undefined)
        process.stderr.write(
          'warning: --client-secret is readable by other users (ps) and kept in shell history; prefer --client-secret-file PATH, or - for stdin\n',
        );
      const tenant = required(v, 'tenant');
      const clientId = required(v, 'client-id');
      // The platform sends its authorization code there: the rules of a client's redirect URI.
      const redirectUri = parseRedirectUri(required(v, 'redirect-uri'), ctx.production());
      const clientSecret = onArgv ?? (await readSecretLine('client-secret-file', fromFile as string));
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
      await ctx.auditAdmin(this.name, CONTROL_PLANE_TENANT_ID, 'chat_platform_apps', {
        resealed: result.resealed,
        unreadable: result.unreadable.length,
      });
      return result;
    },
  },
];
