import { Injectable } from '@nestjs/common';
import { IdentityProvidersRepository } from '../directory/identity-providers.repository';
import { AppError } from '../errors/app-error';

/**
 * Contract 14: `provider remove` ends the flows under way, and a flow is under way until its proof
 * is spent. A tenant removes a provider it no longer trusts (its keys leaked, its issuer was taken
 * over), so a proof that provider made a moment earlier no longer signs in or attaches anything.
 * Email and chat-platform proofs are not of a removable provider.
 */
@Injectable()
export class RemovedProviders {
  constructor(private readonly providers: IdentityProvidersRepository) {}

  async refuseProofOfRemoved(tenantId: string, provider: string): Promise<void> {
    if (provider === 'email' || provider === 'chat_platform') return;
    if (!(await this.providers.isConfigured(tenantId, provider))) throw new AppError('invalid_proof');
  }
}
