import type { UserDetails } from './user-records.repository';

/** An identity as a player's account shows it (contract 13), and the console too (contract 15). */
export interface IdentityView {
  readonly provider: string;
  readonly provider_subject: string;
  readonly email?: string;
}

/** Contract 13: `email` is stated for email identities only, never for a chat-platform account. */
export function identityViews(user: Pick<UserDetails, 'identities'>): IdentityView[] {
  return user.identities.map((i) =>
    i.provider === 'email' && i.email !== null
      ? { provider: i.provider, provider_subject: i.providerSubject, email: i.email }
      : { provider: i.provider, provider_subject: i.providerSubject },
  );
}
