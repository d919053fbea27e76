import type { AppConfig } from '../config/config';

/**
 * The control plane (spec 1.6): the realm the console's members sign in to and its one client,
 * the management console. Every module that tells the control plane apart from a customer tenant
 * names it from here.
 */

/** The control plane's tenant id; no customer tenant may take it (`tenant create`, the guest routes). */
export const CONTROL_PLANE_TENANT_ID = 'control-plane';

/** The control plane's display name as the seed writes it. */
export const CONTROL_PLANE_TENANT_NAME = 'Control plane';

/** The tenant kind of the control plane, also the realm of its tokens in metrics and alarms. */
export const CONTROL_PLANE_KIND = 'control_plane';

/** The console client's display name as the seed writes it. */
export const CONSOLE_CLIENT_NAME = 'Management console';

/** Management scopes (contract 15): reads, and the console's changes of a tenant. */
export const MANAGEMENT_SCOPES = ['tenant:read', 'tenant:write'] as const;

/** The scope a console change needs besides the member's role (contract 15). */
export const MANAGEMENT_WRITE_SCOPE = 'tenant:write' satisfies (typeof MANAGEMENT_SCOPES)[number];

/** The exact audience of management access tokens (contract section 3). */
export const MANAGEMENT_AUDIENCE = 'urn:svc:management';

/** The console's exact callback URI, the only redirect URI of the console client. */
export function consoleCallbackUri(config: Pick<AppConfig, 'consoleOrigin'>): string {
  return `${config.consoleOrigin}/api/auth/callback`;
}
