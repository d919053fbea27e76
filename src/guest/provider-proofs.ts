import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { IdentitiesRepository } from '../directory/identities.repository';
import { AppError } from '../errors/app-error';
import { FlowRecordsStore } from './flow-records.store';

/** The flow a proof is bound to: tenant, client, flow and the hash of its cookie. */
export interface ProofOwner {
  readonly tenantId: string;
  readonly clientId: string;
  readonly flowId: string;
  readonly cookieHash: string;
}

/** A credential a provider proved: who, and an email only when the provider verified it. */
export interface ProvenCredential {
  readonly provider: string;
  readonly subject: string;
  readonly verifiedEmail: string | null;
  readonly metadata: Record<string, string | null>;
}

/**
 * Turns a credential a provider proved into a one-time provider proof (contract 6 and 14, spec 4.3
 * rule 6): the credential resolves to its tenant user, a provisional one when it is new, and the
 * proof is bound to the tenant, client and browser flow. The identity keeps the address its
 * provider verified last: a provider that sends the email only the first time (Sign in with Apple)
 * keeps the one the identity was created with. An email code is such a proof too: its provider is
 * `email`.
 */
@Injectable()
export class ProviderProofs {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly identities: IdentitiesRepository,
    private readonly records: FlowRecordsStore,
  ) {}

  /** `inactive` is the refusal when the credential's user or identity is no longer active. */
  async issue(
    owner: ProofOwner,
    credential: ProvenCredential,
    inactive: () => AppError = () => new AppError('forbidden', 'This account is not active.'),
  ): Promise<{ proof_id: string; expires_in: number }> {
    const { user, identity, created } = await this.identities.resolveOrCreate(
      {
        tenantId: owner.tenantId,
        provider: credential.provider,
        providerSubject: credential.subject,
        email: credential.verifiedEmail,
        emailVerified: credential.verifiedEmail !== null,
        metadata: credential.metadata,
      },
      'provisional',
    );
    if (user.status !== 'active' || identity.status !== 'active') throw inactive();
    // The provider's address now, when it verified one that the row does not keep: most providers
    // send their current address at every sign-in, and a player who changed it there is looked up by
    // the new one. An unverified address, or none (Apple after the first time), leaves the row.
    const verified = credential.verifiedEmail;
    if (!created && verified !== null && (identity.email !== verified || !identity.emailVerified))
      await this.identities.refreshVerifiedEmail(identity, verified);
    const email = credential.verifiedEmail ?? (identity.emailVerified ? identity.email : null);
    const ttl = this.config.ttl.providerProof;
    const proofId = await this.records.putProof(
      owner.flowId,
      {
        kind: 'provider',
        tenantId: owner.tenantId,
        clientId: owner.clientId,
        cookieHash: owner.cookieHash,
        userId: user.id,
        identityId: identity.id,
        provider: credential.provider,
        providerSubject: credential.subject,
        email,
        emailVerified: email !== null,
      },
      ttl,
    );
    return { proof_id: proofId, expires_in: ttl };
  }
}
