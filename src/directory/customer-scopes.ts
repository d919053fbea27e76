/** Scopes a customer client may be allowed (contract section 7's `client create --scopes`). */
export const CUSTOMER_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export type CustomerScope = (typeof CUSTOMER_SCOPES)[number];

export function isCustomerScope(s: string): s is CustomerScope {
  return (CUSTOMER_SCOPES as readonly string[]).includes(s);
}
