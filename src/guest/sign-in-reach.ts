/** An active identity of a user, as far as whether it can still sign in depends on it. */
export interface HeldIdentity {
  readonly provider: string;
  /** The issuer that proved an OpenID Connect identity (`metadata.issuer`); null when not recorded. */
  readonly issuer: string | null;
}

/** What a tenant offers to sign in with, beside email codes, which every customer tenant has. */
export interface TenantSignIns {
  /** The tenant's OpenID Connect providers: id → issuer. */
  readonly providers: ReadonlyMap<string, string>;
  /** Whether the tenant has a chat-platform application. */
  readonly chatPlatform: boolean;
}

/**
 * Whether a player could sign in with this identity today (contract 14: unlinking never leaves an
 * account without a credential). An email identity always can. A chat-platform identity can while
 * the tenant has a chat-platform application (`chat/start` and its callback need one). An identity
 * of an OpenID Connect provider can while the tenant has a provider of that id at the issuer that
 * proved it: `provider remove` keeps the identities it proved, but nobody signs in with them until
 * the provider is added again. An identity whose issuer was never recorded (of a provider removed
 * before issuers were recorded) cannot be shown to belong to the provider now registered under its
 * id, and does not count: the doubt keeps a credential rather than strands a player.
 */
export function canSignIn(identity: HeldIdentity, tenant: TenantSignIns): boolean {
  if (identity.provider === 'email') return true;
  if (identity.provider === 'chat_platform') return tenant.chatPlatform;
  const issuer = tenant.providers.get(identity.provider);
  return issuer !== undefined && issuer === identity.issuer;
}
