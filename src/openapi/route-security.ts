import type { Schema } from '../http/openapi/schema';
import type { Policy } from '../http/policy.decorator';
import type { RouteDeclaration } from '../http/route';

/**
 * The security scheme (components.securitySchemes) that states each policy, so a client reads from
 * the document what the global guard will ask of it. `public` asks nothing.
 */
const POLICY_SCHEMES: Record<Policy, string | null> = {
  public: null,
  'origin:auth': 'authOrigin',
  'origin:console': 'consoleOrigin',
  'basic:console-client': 'consoleClientBasic',
  'bearer:management': 'managementBearer',
  'bearer:guest': 'guestBearer',
  'console-session': 'consoleSession',
};

/**
 * An operation's `security`: one requirement holding the policy's scheme and the credentials the
 * handler checks besides (all of them at once), or none for a public route.
 */
export function securityOf(route: Pick<RouteDeclaration, 'policy' | 'handlerChecks'>): Schema[] {
  const scheme = POLICY_SCHEMES[route.policy];
  const checks = route.handlerChecks ?? [];
  if (scheme === null) {
    if (checks.length > 0) throw new Error(`OpenAPI: a public route cannot require ${checks.join(', ')}`);
    return [];
  }
  return [Object.fromEntries([scheme, ...checks].map((s) => [s, []]))];
}
